"""The project's test sessions end with where their time went, per test file (`make test`'s budget)."""

from __future__ import annotations

import pytest

from tests.tools.time_budget import write_budget


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if not config.getoption("winsuite_phase", None):  # not in a phase of `winsuite run --cases tests/…`
        write_budget(terminalreporter)
