"""Per-test flakiness as TestGrid's flip analyzer computes it over the last days of a tab."""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass

from winsuite_reports.conventions import FailureClass
from winsuite_reports.model import Build
from winsuite_reports.model import Cell
from winsuite_reports.model import Job
from winsuite_reports.model import Status
from winsuite_reports.status import coalesce

# A failure whose whole message is one word ("Timeout", "Error") is an infrastructure failure to TestGrid.
INFRA_MESSAGE = re.compile(r"^\w+$")
# A hard break is not flakiness: runs of this many failures in a row are skipped.
IGNORE_FAILURES_IN_A_ROW = 3
DEFAULT_DAYS = 7.0  # TestGrid's days_of_analysis


def flip_flakiness(statuses: Sequence[Status] | str) -> float:
    """TestGrid's calculateFlipFlakiness: 100 * flips / considered runs, `statuses` newest first (Status values, or
    their one-letter codes).

    A flip is a pass→fail transition; a FLAKY cell always counts as one flip (and as passing afterwards). Runs of
    IGNORE_FAILURES_IN_A_ROW failures or more are a hard break, left out; what remains flips once per FLAKY cell
    and once per run of failures (each run follows a pass, a flake or the start, after which TestGrid counts the
    test as passing).
    """
    codes = statuses if isinstance(statuses, str) else "".join(status.value for status in statuses)
    considered = _HARD_BREAK.sub("", codes)
    if not considered:
        return 0.0
    flips = considered.count(Status.FLAKY.value) + len(_FAILURE_RUN.findall(considered))
    return 100 * flips / len(considered)


_HARD_BREAK = re.compile(f"{Status.FAIL.value}{{{IGNORE_FAILURES_IN_A_ROW},}}")
_FAILURE_RUN = re.compile(f"{Status.FAIL.value}+")


def is_infra_failure(cell: Cell) -> bool:
    """A failure counted apart from the test's own, as TestGrid counts infrastructure failures: a test the run cut off
    (interrupted), one whose class is infrastructure, or, where the results name no class, TestGrid's one-word rule."""
    if cell.interrupted or cell.failure_class:
        return cell.interrupted or cell.failure_class == FailureClass.INFRASTRUCTURE
    return bool(cell.message and INFRA_MESSAGE.match(cell.message))


# not frozen: a frozen dataclass's __init__ costs four times as much, and a big tab makes one per row
@dataclass(slots=True)
class RowFlakiness:
    """One row's health over the analysis window."""

    row: str
    flakiness: float  # percent, 0 to 100
    passed: int
    failed: int  # non-infra failures
    flaky: int
    infra_failures: int

    @property
    def runs(self) -> int:
        return self.passed + self.failed + self.flaky

    @property
    def rated_by_testgrid(self) -> bool:
        """TestGrid rates only tests with a run that passed or failed outright (Departure.RETRIED_EVERY_RUN)."""
        return self.passed + self.failed > 0


@dataclass(frozen=True)
class TabFlakiness:
    """A tab's flakiness: every row that ran in the window, flakiest first."""

    tests: list[RowFlakiness]
    builds: int  # columns in the window
    days: float

    @property
    def average(self) -> float:
        return sum(map(_FLAKINESS, self.tests)) / len(self.tests) if self.tests else 0.0

    @property
    def flaky_tests(self) -> list[RowFlakiness]:
        """The tests that flipped: the first ones, flakiest first (a big tab has a hundred thousand that did not)."""
        return list(itertools.takewhile(_flipped, self.tests))


def window(job: Job, days: float) -> list[Build]:
    """The builds that started within `days` of the newest one (not of now, Departure.WINDOW_FROM_NEWEST_BUILD)."""
    newest = max((build.started for build in job.builds), default=0)
    return [build for build in job.builds if build.started and newest - build.started <= days * 86400]


def analyze(job: Job, *, days: float = DEFAULT_DAYS) -> TabFlakiness:
    builds = window(job, days)
    in_window = {id(build) for build in builds}
    # Per column of the job: None outside the window, else whether every row of it failed (TestGrid's
    # failingColumns, over its rows: the tests and the Overall row, when there are two rows or more).
    failing = [
        (_all_failed(build) if job.rows else False) if id(build) in in_window else None
        for build in job.builds
    ]
    columns = [(index, column_failed) for index, column_failed in enumerate(failing) if column_failed is not None]
    # The window is the newest builds (builds sort by id, which is mostly by start): then each row is read by its
    # runs of one cell, clipped to the window, instead of cell by cell.
    newest = len(columns) if all(index == i for i, (index, _) in enumerate(columns)) else 0
    tests = []
    # A row that is one cell throughout the window (a passing row, a one-build tab) has the figures of every other
    # row that is that cell throughout: figured once per cell.
    whole: dict[int, _Figures | None] = {}
    every_runs = job.every_row_runs() if newest else {}
    for key in job.rows:
        runs = every_runs.get(key)
        if runs is not None and len(runs) == 1 and runs[0][1] >= newest:
            figures = whole.get(id(runs[0][0]), _UNSEEN)
            if figures is _UNSEEN:
                figures = whole[id(runs[0][0])] = _figures(_window_runs(job, key, columns, newest), failing)
        else:
            figures = _figures(_window_runs(job, key, columns, newest), failing)
        if figures is not None:
            tests.append(RowFlakiness(key, *figures))
    # Flakiest first, then by row: two stable sorts by a C-level key (most rows are in row order, most rates 0).
    tests.sort(key=_ROW)
    tests.sort(key=_FLAKINESS, reverse=True)
    return TabFlakiness(tests, len(builds), days)


_UNSEEN: _Figures = (-1.0, 0, 0, 0, 0)  # no row that is this cell throughout the window has been figured yet
_ROW, _FLAKINESS = operator.attrgetter("row"), operator.attrgetter("flakiness")


def _flipped(test: RowFlakiness) -> bool:
    return test.flakiness > 0


# A row's flakiness, passes, failures, flakes and infrastructure failures in the window.
_Figures = tuple[float, int, int, int, int]


def _figures(runs: Iterator[tuple[Cell, int, int]], failing: list[bool | None]) -> _Figures | None:
    """A row's figures from its runs in the window (see _window_runs); None when it did not run there."""
    codes: list[str] = []
    passed = failed = flaky = infra = 0
    for cell, length, first in runs:
        code = _COALESCED_CODE[cell.status]
        if code == _PASS:
            passed += length
            codes.append(code * length)
        elif code == _FLAKY:
            flaky += length
            codes.append(code * length)
        elif code == _NO_RESULT:
            continue
        elif is_infra_failure(cell):
            infra += length
        else:
            failed += length
            # a column where every test failed says nothing about this test
            codes.extend(code for index in range(first, first + length) if not failing[index])
    if passed or failed or flaky:
        return flip_flakiness("".join(codes)), passed, failed, flaky, infra
    return None


def _window_runs(job: Job, key: str, columns: list[tuple[int, bool]], newest: int) -> Iterator[tuple[Cell, int, int]]:
    """The row's cells in the window as (cell, length, first build index): its runs clipped to the `newest` builds
    when the window is those, else one by one."""
    if newest:
        first = 0
        for cell, length in job.row_runs(key):
            if first >= newest:
                return
            yield cell, min(length, newest - first), first
            first += length
    else:
        cells = job.cells(key)
        for index, _ in columns:
            yield cells[index], 1, index


# A cell's status, coalesced, as its one-letter code (looked up once per cell of the window); a running cell is no
# run (TestGrid reads it as UNKNOWN, which its analysis skips).
_COALESCED_CODE = {status: coalesce(status, ignore_running=True).value for status in Status}
_PASS, _FLAKY, _NO_RESULT = Status.PASS.value, Status.FLAKY.value, Status.NO_RESULT.value


def _all_failed(build: Build) -> bool:
    statuses = [build.overall.status, *(status for status, n in build.counts.items() if n)]
    return not any(coalesce(status, ignore_running=True) in (Status.PASS, Status.FLAKY) for status in statuses)
