"""The KEP-2578 category view of a tab: pass and fail per operational-readiness category and test case, for the
newest build and through the recent history, as windows-operational-readiness' reporter groups them.

A row's category and case come from its results (the `category` and `ops-readiness-case` properties); a row of
winsuite's catalog without a case is its own case, named by the test.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

from winsuite_reports.model import NO_RESULT
from winsuite_reports.model import Cell
from winsuite_reports.model import Job
from winsuite_reports.model import Status
from winsuite_reports.model import by_key

UNCATEGORIZED = "(no category)"
HISTORY = 10  # builds shown per case, newest first


# not frozen: a frozen dataclass's __init__ costs four times as much, and a big tab makes one per row
@dataclass(slots=True)
class CaseResult:
    """One test case (or uncased test) of a category: its verdict in each recent build, newest first."""

    name: str
    tests: list[str]
    history: list[Status]  # PASS, FAIL, FLAKY, SKIP or NO_RESULT per build

    @property
    def latest(self) -> Status:
        return self.history[0] if self.history else Status.NO_RESULT

    @property
    def pass_rate(self) -> float | None:
        ran = [s for s in self.history if s in (Status.PASS, Status.FAIL, Status.FLAKY)]
        return sum(s is Status.PASS for s in ran) / len(ran) if ran else None


@dataclass(frozen=True)
class CategoryResult:
    name: str
    cases: list[CaseResult]

    def count(self, status: Status) -> int:
        """Cases with this verdict in the newest build."""
        return sum(case.latest is status for case in self.cases)


def case_status(columns: list[dict[str, Cell]], rows: list[str]) -> list[Status]:
    """A case's verdict in each build (its cells given per build): FAIL if any of its tests failed, FLAKY if any
    flaked, PASS if all that ran passed, SKIP if none ran but some were skipped, NO_RESULT when the build has none of
    them."""
    verdicts = []
    for cells in columns:
        found = {_VERDICT[cells.get(row, NO_RESULT).status] for row in rows}
        verdicts.append(next(verdict for verdict in _WORST_FIRST if verdict in found))
    return verdicts


# A test's verdict in a build, as its case counts it: a running test ran (and failed nothing yet).
_VERDICT = {Status.FAIL: Status.FAIL, Status.FLAKY: Status.FLAKY, Status.PASS: Status.PASS,
            Status.RUNNING: Status.PASS, Status.SKIP: Status.SKIP, Status.NO_RESULT: Status.NO_RESULT}
_WORST_FIRST = (Status.FAIL, Status.FLAKY, Status.PASS, Status.SKIP, Status.NO_RESULT)


def categories(job: Job, history: int = HISTORY) -> list[CategoryResult]:
    """The tab's rows grouped by category, then by test case; categories and cases sorted by name."""
    grouped: dict[str, dict[str, list[str]]] = {}
    split_categories: dict[str, list[str]] = {}  # most rows share their category field: split once
    for key, info in job.rows.items():
        category_text, case_text = info.category or UNCATEGORIZED, info.case or key
        row_categories = split_categories.get(category_text)
        if row_categories is None:
            row_categories = split_categories[category_text] = [c.strip() for c in category_text.split(",")]
        row_cases = [c.strip() for c in case_text.split(" | ")] if " | " in case_text else [case_text.strip()]
        for category in row_categories:
            cases = grouped.setdefault(category, {})
            for case in row_cases:
                cases.setdefault(case, []).append(key)
    builds = [b for b in job.builds if not b.running][:history]
    # Most cases are one test, and most tests have the same cells in these builds (the one shared passing cell):
    # their verdicts are figured once per combination of cells, and shared (the page renders each list once).
    newest = len(builds) if all(map(operator.is_, builds, job.builds)) else 0  # the job's newest builds
    shared: dict[tuple[int, ...], list[Status]] = {}
    columns: list[dict[str, Cell]] = []  # the builds' cells, read once a case needs them (most read the grid's)

    def verdicts(rows: list[str]) -> list[Status]:
        if len(rows) > 1 or not newest:
            if not columns:
                columns.extend(build.cells for build in builds)
            return case_status(columns, rows)
        cells = job.cells(rows[0])[:newest]
        found = shared.get(memo := tuple(map(id, cells)))
        if found is None:
            found = shared[memo] = [_VERDICT[cell.status] for cell in cells]
        return found

    return [CategoryResult(category, [CaseResult(name, rows, verdicts(rows)) for name, rows in by_key(cases).items()])
            for category, cases in by_key(grouped).items()]
