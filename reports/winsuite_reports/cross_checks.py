"""A tab's cross-check rows (--engine both: does winsuite's port agree with e2e.test?) counted apart from the
product's tests: the cell counts its pass rates read without them, and how many of them agreed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass

from winsuite_reports.conventions import cross_check_rows
from winsuite_reports.job import Job
from winsuite_reports.model import Status


@dataclass(frozen=True)
class CrossChecks:
    """Cross-check cells: passed (the engines agree), failed (they disagree), skipped (not compared: a side was
    interrupted, or neither ran)."""

    agree: int = 0
    disagree: int = 0
    not_compared: int = 0

    def label(self) -> str:
        """e.g. "12 agree, 1 disagree"; "" when there is none."""
        parts = ((self.agree, "agree"), (self.disagree, "disagree"), (self.not_compared, "not compared"))
        return ", ".join(f"{n} {what}" for n, what in parts if n)

    def as_json(self) -> dict[str, int]:
        return {"agree": self.agree, "disagree": self.disagree, "not_compared": self.not_compared}


def check_counts(job: Job) -> list[Counter[Status]]:
    """Per build, newest first: how many of its cross-check rows' cells have each status (where it has one)."""
    per_build: list[Counter[Status]] = [Counter() for _ in job.builds]
    for key in cross_check_rows(job.rows):
        for counts, cell in zip(per_build, job.cells(key), strict=True):
            if cell.status is not Status.NO_RESULT:
                counts[cell.status] += 1
    return per_build


def product_counts(job: Job) -> list[Mapping[Status, int]]:
    """Per build, newest first: how many of its cells have each status, its cross-check rows' left out (what a pass
    rate of the product's tests reads)."""
    return list(map(without, (build.counts for build in job.builds), check_counts(job)))


def without(counts: Mapping[Status, int], checks: Counter[Status]) -> Mapping[Status, int]:
    """A build's cell counts (Build.counts) without its cross-check rows' (`checks`, of check_counts)."""
    return {status: n - checks[status] for status, n in counts.items()} if checks else counts


def tally(counts: Iterable[Counter[Status]]) -> CrossChecks:
    """The cross-check cells of some builds' `check_counts`, by what they say."""
    total: Counter[Status] = Counter()
    for build_counts in counts:
        total.update(build_counts)
    return CrossChecks(total[Status.PASS], total[Status.FAIL] + total[Status.FLAKY], total[Status.SKIP])
