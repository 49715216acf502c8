"""The KEP-2578 category view of a tab: pass and fail per operational-readiness category and test case, for the
newest build and through the recent history, as windows-operational-readiness' reporter groups them.

A row's category and case come from its results (the `category` and `ops-readiness-case` properties); a row of
winsuite's catalog without a case is its own case, named by the test.
"""

from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass

from winsuite_reports.job import Job
from winsuite_reports.job import cells_of
from winsuite_reports.model import NO_RESULT
from winsuite_reports.model import PASS
from winsuite_reports.model import Cell
from winsuite_reports.model import RowInfo
from winsuite_reports.model import Status
from winsuite_reports.model import by_key

UNCATEGORIZED = "(no category)"
HISTORY = 10  # builds shown per case, newest first
# A tab with more cases than this lists only the cases that did not pass in every build shown, and counts the others:
# a page of a hundred thousand passing cases is tens of megabytes that no browser shows usefully (the grid has them).
LISTED_CASES = 10_000


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
    cases: list[CaseResult]  # the cases listed
    passing: int = 0  # cases not listed (a tab of more than LISTED_CASES): each passed in every build shown

    def count(self, status: Status) -> int:
        """Cases with this verdict in the newest build."""
        listed = sum(case.latest is status for case in self.cases)
        return listed + self.passing if status is Status.PASS else listed


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


def categories(job: Job, history: int = HISTORY, listed: int = LISTED_CASES) -> list[CategoryResult]:
    """The tab's rows grouped by category, then by test case; categories and cases sorted by name. Past `listed`
    cases, a case that passed in every build shown is counted, not listed."""
    builds = [b for b in job.builds if not b.running][:history]
    grouped, alone = _grouped(job, apart=bool(builds) and len(job.rows) > listed)
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
        cells = tuple(itertools.islice(cells_of(job.row_runs(rows[0])), newest))  # no further than shown
        found = shared.get(memo := tuple(map(id, cells)))
        if found is None:
            found = shared[memo] = [_VERDICT[cell.status] for cell in cells]
        return found

    # Past `listed` cases, the rows that passed in every build shown are found build by build, in bulk: most of them
    # are then counted without a verdict list of their own.
    counting = bool(builds) and len(alone) + sum(map(len, grouped.values())) > listed
    if counting:
        columns.extend(build.cells for build in builds)
    not_passing = _not_passing(job, columns) if counting else set()
    # The rows kept apart are each their own uncategorized case: only those that did not pass throughout are looked
    # at (a big tab's hundred thousand passing tests are a count).
    apart_passing = 0
    if alone:
        shown_apart = [key for key in not_passing if _own_case(key, job.rows[key])] if counting else alone
        apart_passing = len(alone) - len(shown_apart)
        grouped.setdefault(UNCATEGORIZED, {}).update(zip(shown_apart, map(list, zip(shown_apart)), strict=True))
    result = []
    for category, cases in by_key(grouped).items():
        shown, passing = [], apart_passing if category == UNCATEGORIZED else 0
        for name in sorted(cases):
            rows = cases[name]
            if counting and len(rows) == 1 and rows[0] not in not_passing:
                passing += 1
                continue
            found = verdicts(rows)
            if counting and found.count(Status.PASS) == len(found):
                passing += 1
            else:
                shown.append(CaseResult(name, rows, found))
        result.append(CategoryResult(category, shown, passing))
    return result


def _not_passing(job: Job, columns: list[dict[str, Cell]]) -> set[str]:
    """The rows without a passing verdict in some of these builds: missing from it, or another verdict there."""
    found: set[str] = set()
    for cells in columns:
        found.update(job.rows.keys() - cells.keys())
        found.update(key for key, cell in cells.items()
                     if cell is not PASS and _VERDICT[cell.status] is not Status.PASS)
    return found


def _own_case(key: str, info: RowInfo) -> bool:
    """Whether the row is its own case in no category (most rows of a big tab)."""
    return not (info.category or info.case or " | " in key)


def _grouped(job: Job, *, apart: bool = False) -> tuple[dict[str, dict[str, list[str]]], list[str]]:
    """category -> case -> its rows, in the job's row order; with `apart`, the rows that are their own uncategorized
    case under their own name (no other row's case, no surrounding blanks) are left out and listed beside."""
    simple: list[str] = []
    other: list[str] = []
    for key, info in job.rows.items():
        (simple if _own_case(key, info) else other).append(key)
    grouped: dict[str, dict[str, list[str]]] = {}
    uncategorized: dict[str, list[str]] = {}
    split_categories: dict[str, list[str]] = {}  # most rows share their category field: split once
    for key in other:
        info = job.rows[key]
        category_text, case_text = info.category or UNCATEGORIZED, info.case or key
        row_categories = split_categories.get(category_text)
        if row_categories is None:
            row_categories = split_categories[category_text] = [c.strip() for c in category_text.split(",")]
        row_cases = [c.strip() for c in case_text.split(" | ")] if " | " in case_text else [case_text.strip()]
        for category in row_categories:
            cases = uncategorized if category == UNCATEGORIZED else grouped.setdefault(category, {})
            for case in row_cases:
                cases.setdefault(case, []).append(key)
    stripped = list(map(str.strip, simple))  # str.strip gives the very string back when there is nothing to strip
    if apart and not any(map(operator.is_not, stripped, simple)) and not any(
            case in job.rows and _own_case(case, job.rows[case]) for case in uncategorized):
        if uncategorized:
            grouped[UNCATEGORIZED] = uncategorized
        return grouped, simple
    # Each simple row is a case of its own, joined by rows of the other kind naming it, and by the simple rows whose
    # names differ from its only in surrounding blanks: in the job's row order, which is by key.
    joined: dict[str, list[str]] = {}
    for key, case in zip(simple, stripped, strict=True):
        joined.setdefault(case, []).append(key)
    for case, rows in uncategorized.items():
        if case in joined:
            joined[case] = sorted(joined[case] + rows)
        else:
            joined[case] = rows
    if joined:
        grouped[UNCATEGORIZED] = joined
    return grouped, []
