"""winsuite's own pytest hooks (`pytest_winsuite_*`), for plugins that extend a run."""

from __future__ import annotations

from typing import Any

import pytest

# -- results phase -----------------------------------------------------------------------------------


@pytest.hookspec(firstresult=False)
def pytest_winsuite_result(config: pytest.Config, result: dict[str, Any]) -> None:
    """Called on the controller for every recorded attempt of a test, as the results writer stores it
    (`result` is the attempt as JSON data: name, nodeid, outcome, attempt, duration, message, properties)."""
