"""Per-test flakiness as TestGrid's flip analyzer computes it over the last days of a tab."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

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


def flip_flakiness(statuses: Sequence[Status]) -> float:
    """TestGrid's calculateFlipFlakiness: 100 * flips / considered runs, `statuses` newest first.

    A flip is a pass→fail transition; a FLAKY cell always counts as one flip (and as passing afterwards).
    """
    flips = considered = 0
    last_passing = True  # no flakes if we pass 100 %
    i = 0
    while i < len(statuses):
        run = _failures_from(statuses, i)
        if run >= IGNORE_FAILURES_IN_A_ROW:
            i += run
            if i >= len(statuses):
                break
        status = statuses[i]
        considered += 1
        if status is Status.FLAKY:
            flips += 1
            last_passing = True
        elif status is Status.FAIL:
            flips += last_passing
            last_passing = False
        else:
            last_passing = True
        i += 1
    return 100 * flips / considered if considered else 0.0


def _failures_from(statuses: Sequence[Status], start: int) -> int:
    end = start
    while end < len(statuses) and statuses[end] is Status.FAIL:
        end += 1
    return end - start


def is_infra_failure(cell: Cell) -> bool:
    """TestGrid's one-word rule, plus winsuite's interrupt marker: the run, not the test, went wrong."""
    return cell.interrupted or bool(cell.message and INFRA_MESSAGE.match(cell.message))


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class TabFlakiness:
    """A tab's flakiness: every row that ran in the window, flakiest first."""

    tests: list[RowFlakiness]
    builds: int  # columns in the window
    days: float

    @property
    def average(self) -> float:
        return sum(test.flakiness for test in self.tests) / len(self.tests) if self.tests else 0.0

    @property
    def flaky_tests(self) -> list[RowFlakiness]:
        return [test for test in self.tests if test.flakiness > 0]


def window(job: Job, days: float) -> list[Build]:
    """The builds that started within `days` of the newest one (not of now: old results still analyse)."""
    newest = max((build.started for build in job.builds), default=0)
    return [build for build in job.builds if build.started and newest - build.started <= days * 86400]


def analyze(job: Job, *, days: float = DEFAULT_DAYS) -> TabFlakiness:
    builds = window(job, days)
    in_window = {id(build) for build in builds}
    # Per column of the job: None outside the window, else whether every test of it failed.
    failing = [
        (_all_failed(build) if len(job.rows) > 1 else False) if id(build) in in_window else None
        for build in job.builds
    ]
    tests = []
    for key in job.rows:
        statuses: list[Status] = []
        passed = failed = flaky = infra = 0
        for cell, column_failed in zip(job.cells(key), failing, strict=True):
            if column_failed is None:
                continue
            status = coalesce(cell.status, ignore_running=False)
            if status is Status.NO_RESULT:
                continue
            if status is Status.PASS:
                passed += 1
            elif status is Status.FLAKY:
                flaky += 1
            elif is_infra_failure(cell):
                infra += 1
                continue
            else:
                failed += 1
                if column_failed:  # a column where every test failed says nothing about this test
                    continue
            statuses.append(status)
        if passed or failed or flaky:
            tests.append(RowFlakiness(key, flip_flakiness(statuses), passed, failed, flaky, infra))
    tests.sort(key=lambda test: (-test.flakiness, test.row))
    return TabFlakiness(tests, len(builds), days)


def _all_failed(build: Build) -> bool:
    return not any(
        coalesce(cell.status, ignore_running=True) in (Status.PASS, Status.FLAKY)
        for cell in build.cells.values()
    )
