"""Everything the pages and the markdown summary show, computed from a History: each figure once, when first asked
for (a big report's grid pages are written by a forked copy of the process that needs only a few of the figures,
while the process computes the others; see reports.render)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from functools import cached_property

from winsuite_reports.clusters import Cluster
from winsuite_reports.clusters import across_jobs
from winsuite_reports.clusters import job_clusters
from winsuite_reports.clusters import most_failures_first
from winsuite_reports.collection import collection_paused
from winsuite_reports.diff import RunDiff
from winsuite_reports.diff import diff_between
from winsuite_reports.diff import latest_diff
from winsuite_reports.failure_counts import FailureFigures
from winsuite_reports.failure_counts import figures
from winsuite_reports.flakiness import DEFAULT_DAYS
from winsuite_reports.flakiness import RowFlakiness
from winsuite_reports.flakiness import TabFlakiness
from winsuite_reports.flakiness import analyze
from winsuite_reports.job import History
from winsuite_reports.job import Job
from winsuite_reports.model import PlanItem
from winsuite_reports.model import ReportError
from winsuite_reports.readiness import Readiness
from winsuite_reports.readiness import assess
from winsuite_reports.regression import GreenToRed
from winsuite_reports.regression import green_to_red
from winsuite_reports.release_jobs import Criteria
from winsuite_reports.status import TabSummary
from winsuite_reports.status import Thresholds
from winsuite_reports.status import summarize
from winsuite_reports.svg import Point
from winsuite_reports.svg import trend_points

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class ReportOptions:
    thresholds: Thresholds = field(default_factory=Thresholds)
    criteria: Criteria = field(default_factory=Criteria)
    flake_days: float = DEFAULT_DAYS
    blocking: tuple[str, ...] = ()  # judge these jobs as release-blocking instead of their metadata
    diffs: tuple[tuple[str, str, str], ...] = ()  # (job, old build, new build) asked for besides the latest
    top_flaky: int = 10
    top_clusters: int = 10  # the index's biggest failure clusters


@dataclass(frozen=True)
class TabReport:
    """A tab's figures, each computed on first use from the job (see the module's text), with the cycle collector
    held off as while the report was built."""

    job: Job
    slug: str  # directory name of the tab's pages
    options: ReportOptions
    now: float
    clusters: list[Cluster]  # the job's failures clustered, most failures first
    diffs: list[RunDiff]  # the latest pair first, then the ones asked for (made at once: a pair asked for may not be)

    @cached_property
    @collection_paused()
    def summary(self) -> TabSummary:
        return summarize(self.job, self.options.thresholds, self.now)

    @cached_property
    @collection_paused()
    def flakiness(self) -> TabFlakiness:
        return analyze(self.job, days=self.options.flake_days)

    @cached_property
    @collection_paused()
    def trend(self) -> list[Point]:
        return trend_points(self.job)

    @cached_property
    @collection_paused()
    def regression(self) -> GreenToRed | None:
        """The newest pass-then-fail pair of builds."""
        return green_to_red(self.job)

    @cached_property
    @collection_paused()
    def failures(self) -> FailureFigures:
        """Over the recent columns."""
        return figures(self.job, self.job.builds[: self.options.thresholds.num_columns_recent])


@dataclass(frozen=True)
class Report:
    history: History
    tabs: list[TabReport]
    generated: float
    options: ReportOptions
    clusters: list[Cluster]  # every job's failures clustered across jobs
    plan_items: Sequence[PlanItem] | None  # the plan's items the readiness verdict covers (None: the packaged plan)

    @cached_property
    @collection_paused()
    def readiness(self) -> Readiness:
        return assess(self.history, self.options.criteria, self.plan_items, self.options.blocking)

    def dashboards(self) -> dict[str, list[TabReport]]:
        grouped: dict[str, list[TabReport]] = {}
        for tab in self.tabs:
            grouped.setdefault(tab.job.dashboard, []).append(tab)
        return grouped

    def top_flaky(self) -> list[tuple[TabReport, RowFlakiness]]:
        ranked = [(tab, test) for tab in self.tabs for test in tab.flakiness.flaky_tests]
        ranked.sort(key=lambda pair: (-pair[1].flakiness, pair[1].row, pair[0].job.name))
        return ranked[: self.options.top_flaky]


@collection_paused()
def build_report(
    history: History, options: ReportOptions, *, now: float, plan_items: Sequence[PlanItem] | None = None
) -> Report:
    """Raises ReportError when the options name a job or build that the history does not hold."""
    unknown = [job for job, _, _ in options.diffs if history.job(job) is None]
    unknown += [job for job in options.blocking if history.job(job) is None]
    if unknown:
        known = ", ".join(job.name for job in history.jobs)
        raise ReportError(f"no job {unknown[0]} under {history.root} (jobs: {known})")
    slugs: set[str] = set()
    per_job = [job_clusters(job) for job in history.jobs]
    tabs = [TabReport(job, _slug(job.name, slugs), options, now, most_failures_first(clusters), _diffs(job, options))
            for job, clusters in zip(history.jobs, per_job, strict=True)]
    return Report(history, tabs, now, options, across_jobs(per_job), plan_items)


def _diffs(job: Job, options: ReportOptions) -> list[RunDiff]:
    """The latest pair first, then the ones asked for; ReportError for a build the job does not hold."""
    latest = latest_diff(job)
    asked = [diff_between(job, old, new) for name, old, new in options.diffs if name == job.name]
    return ([latest] if latest else []) + asked


def _slug(name: str, taken: set[str]) -> str:
    """A file-system and URL safe directory name, unique among the tabs."""
    base = _UNSAFE.sub("-", name).strip("-.") or "job"
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    taken.add(slug)
    return slug
