"""Where a test session's time went, per test file: the budget `make test` prints at its end."""

from __future__ import annotations

from collections.abc import Iterable

import pytest


def seconds_per_file(reports: Iterable[object]) -> dict[str, float]:
    """Each file's tests' setup, call and teardown summed (its module and session fixtures' start included, as the
    first test that asked for them paid it), largest first."""
    totals: dict[str, float] = {}
    for report in reports:
        if isinstance(report, pytest.TestReport):
            path = report.nodeid.partition("::")[0]
            totals[path] = totals.get(path, 0.0) + report.duration
    return dict(sorted(totals.items(), key=lambda item: (-item[1], item[0])))


def budget_lines(totals: dict[str, float]) -> list[str]:
    whole = sum(totals.values())
    lines = [f"{seconds:9.1f}s {100 * seconds / whole if whole else 0:5.1f}%  {path}"
             for path, seconds in totals.items()]
    return [*lines, f"{whole:9.1f}s 100.0%  in {len(totals)} file(s)"]


def write_budget(terminalreporter: pytest.TerminalReporter) -> None:
    reports = [report for reports in terminalreporter.stats.values() for report in reports]
    totals = seconds_per_file(reports)
    if len(totals) > 1:
        terminalreporter.write_sep("=", "time per test file (setup, call and teardown summed)")
        for line in budget_lines(totals):
            terminalreporter.write_line(line)
