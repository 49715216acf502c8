"""tests.tools.time_budget: a session's time summed per test file, largest first."""

from __future__ import annotations

from typing import Literal

import pytest

from tests.tools.time_budget import budget_lines
from tests.tools.time_budget import seconds_per_file


def report(nodeid: str, when: Literal["setup", "call", "teardown"], duration: float) -> pytest.TestReport:
    return pytest.TestReport(nodeid, ("x.py", 0, "x"), {}, "passed", None, when, duration=duration)


def test_phases_of_every_test_are_summed_per_file_largest_first() -> None:
    totals = seconds_per_file([
        report("tests/a.py::test_one", "setup", 30.0), report("tests/a.py::test_one", "call", 1.0),
        report("tests/b.py::test_two[x]", "call", 40.0), report("tests/a.py::test_three", "teardown", 0.5),
        "not a report",
    ])
    assert totals == {"tests/b.py": 40.0, "tests/a.py": 31.5}
    assert budget_lines(totals) == ["     40.0s  55.9%  tests/b.py", "     31.5s  44.1%  tests/a.py",
                                    "     71.5s 100.0%  in 2 file(s)"]
