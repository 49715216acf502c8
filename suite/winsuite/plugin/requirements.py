"""Skips a test, before any fixture runs, when the cluster lacks what the test needs (with the reason)."""

from __future__ import annotations

import pytest

from winsuite.authoring.naming import spec_of
from winsuite.plugin.session import run_session


class Requirements:
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        spec = spec_of(item)
        # A test the run already skips ([LinuxOnly], an exclusion) keeps that reason: it is the decision.
        if spec is None or not spec.needs or item.get_closest_marker("skip") is not None:
            return
        session = run_session(item.config)
        reason = session.facts.skip_reason(spec.needs, session.run.target_os)
        if reason is not None:
            pytest.skip(reason)
