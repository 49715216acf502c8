"""Per-test flakiness as TestGrid's flip analyzer computes it over the last days of a tab."""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from functools import cached_property

from winsuite_reports.evidence import is_infra_failure
from winsuite_reports.job import Job
from winsuite_reports.model import Build
from winsuite_reports.model import Cell
from winsuite_reports.model import Status
from winsuite_reports.status import coalesce

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
    if _BREAK_TEXT not in codes:  # nothing to leave out (most rows): the runs counted by C-level string calls
        considered = codes
        between = codes.split(Status.FAIL.value)  # an empty text between two failures: they are one run
        failure_runs = len(between) - 1 - between[1:-1].count("")
    else:
        considered = _HARD_BREAK.sub("", codes)
        failure_runs = len(_FAILURE_RUN.findall(considered))
    if not considered:
        return 0.0
    flips = considered.count(Status.FLAKY.value) + failure_runs
    return 100 * flips / len(considered)


_BREAK_TEXT = Status.FAIL.value * IGNORE_FAILURES_IN_A_ROW
_HARD_BREAK = re.compile(f"{Status.FAIL.value}{{{IGNORE_FAILURES_IN_A_ROW},}}")
_FAILURE_RUN = re.compile(f"{Status.FAIL.value}+")


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
    """A tab's flakiness: every row that ran in the window, flakiest first (see tests)."""

    flaky_tests: list[RowFlakiness]  # the tests that flipped, flakiest first, then by row
    ran: int  # how many tests ran in the window
    builds: int  # columns in the window
    days: float
    # Each row's figures: a big tab's hundred thousand rows have a few distinct ones, kept by what the row's cells in
    # the window are known by (its token), so that no RowFlakiness is made for a row no page lists.
    rows: list[str] = field(repr=False)
    tokens: list[object] = field(repr=False)  # per row
    figured: dict[object, Figures] = field(repr=False)  # token -> figures, of the tokens that ran in the window

    @property
    def average(self) -> float:
        # The other tests' flakiness is 0.0, which adds nothing: the same sum as over every test, flakiest first.
        return sum(map(_FLAKINESS, self.flaky_tests)) / self.ran if self.ran else 0.0

    @cached_property
    def tests(self) -> list[RowFlakiness]:
        """Every test that ran in the window, flakiest first, then by row (made on first use: a big tab has a hundred
        thousand that did not flip, which no page lists)."""
        by_row = zip(self.rows, map(self.figured.get, self.tokens), strict=True)
        steady = sorted((row, figures) for row, figures in by_row if figures and not figures[0])
        return self.flaky_tests + [RowFlakiness(row, *figures) for row, figures in steady]


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
    if newest:
        every_runs = job.every_row_runs()
        if len(every_runs) > len(job.rows):  # it holds a row asked for that is not the tab's
            every_runs = {key: every_runs[key] for key in job.rows}
        rows, runs = list(every_runs), list(every_runs.values())  # in the runs' order: no lookup per row
        # Rows that share a runs list (a one-build tab's rows of one cell) are figured once, by the list's id.
        tokens: list[object] = list(map(id, runs))
        figured = _figured_by_runs(dict(zip(tokens, runs, strict=True)), newest, failing)
    else:
        rows = list(job.rows)
        tokens = list(rows)  # each row figured on its own, known by its key
        figured = {key: _figures(_one_by_one(job.cells(key), columns), failing) for key in rows}
    ran = {token: figures for token, figures in figured.items() if figures is not None}
    # Rows go through C-level maps only: a big tab has a hundred thousand rows, of a few distinct figures.
    flipped = {token for token, figures in ran.items() if figures[0] > 0}
    flaky_tests = [RowFlakiness(rows[index], *ran[token])
                   for index, token in itertools.compress(enumerate(tokens), map(flipped.__contains__, tokens))]
    # Flakiest first, then by row: two stable sorts by a C-level key.
    flaky_tests.sort(key=_ROW)
    flaky_tests.sort(key=_FLAKINESS, reverse=True)
    ran_count = len(tokens) if len(ran) == len(figured) else sum(map(ran.__contains__, tokens))
    return TabFlakiness(flaky_tests, ran_count, len(builds), days, rows, tokens, ran)


_ROW = operator.attrgetter("row")
_FLAKINESS = operator.attrgetter("flakiness")
# A row's flakiness, passes, failures, flakes and infrastructure failures in the window.
Figures = tuple[float, int, int, int, int]


def _figured_by_runs(runs: dict[object, list[tuple[Cell, int]]], newest: int, failing: list[bool | None]
                     ) -> dict[object, Figures | None]:
    """The figures of each runs list over the `newest` builds. A list that is one cell throughout them has the figures
    of every other such list of a cell that _figures reads alike (its status, and whether a failure is the
    infrastructure's): the passing rows of a long history, the skipped or failed rows of a one-build tab."""
    alike: dict[tuple[Status, bool], Figures | None] = {}
    figured = {}
    for token, row_runs in runs.items():
        if len(row_runs) == 1 and row_runs[0][1] >= newest:
            cell = row_runs[0][0]
            read_as = (cell.status, is_infra_failure(cell))
            if read_as not in alike:
                alike[read_as] = _figures(_clipped(row_runs, newest), failing)
            figured[token] = alike[read_as]
        else:
            figured[token] = _figures(_clipped(row_runs, newest), failing)
    return figured


def _figures(runs: Iterator[tuple[Cell, int, int]], failing: list[bool | None]) -> Figures | None:
    """A row's figures from its cells in the window as (cell, length, first build index); None when it did not run
    there."""
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


def _clipped(runs: list[tuple[Cell, int]], newest: int) -> Iterator[tuple[Cell, int, int]]:
    """A row's runs clipped to the `newest` builds, when the window is those."""
    first = 0
    for cell, length in runs:
        if first >= newest:
            return
        yield cell, min(length, newest - first), first
        first += length


def _one_by_one(cells: Sequence[Cell], columns: list[tuple[int, bool]]) -> Iterator[tuple[Cell, int, int]]:
    """A row's cells in the window's columns, one by one, when the window is not the newest builds."""
    for index, _ in columns:
        yield cells[index], 1, index


# A cell's status, coalesced, as its one-letter code (looked up once per cell of the window); a running cell is no
# run (TestGrid reads it as UNKNOWN, which its analysis skips).
_COALESCED_CODE = {status: coalesce(status, ignore_running=True).value for status in Status}
_PASS, _FLAKY, _NO_RESULT = Status.PASS.value, Status.FLAKY.value, Status.NO_RESULT.value


def _all_failed(build: Build) -> bool:
    statuses = [build.overall.status, *(status for status, n in build.counts.items() if n)]
    return not any(coalesce(status, ignore_running=True) in (Status.PASS, Status.FLAKY) for status in statuses)
