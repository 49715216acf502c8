"""Repo-root pytest glue: the project's own test options (the winsuite plugin itself loads by entry point)."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/unit/golden/*/expected.txt from the current output")


def pytest_ignore_collect(collection_path: object, config: pytest.Config) -> bool | None:
    """tests/runner_cases and tests/evidence_cases hold deliberate failures for `winsuite run --cases`; the project's
    own runs skip them."""
    if any(part in str(collection_path) for part in ("runner_cases", "evidence_cases")) and not config.getoption(
            "winsuite_phase", None):
        return True
    return None
