"""SIG Release's criteria for a release-blocking job (release-blocking-jobs.md), checked over its finished runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from winsuite_reports.job import Job
from winsuite_reports.model import Build
from winsuite_reports.model import Status


@dataclass(frozen=True)
class Criteria:
    """What the KEP's "100 % green, non-flaky" and SIG Release's release-blocking criteria are read over."""

    runs: int = 10  # the last N finished runs the KEP criterion reads
    min_pass_rate: float = 0.75
    max_consecutive_failures: int = 10
    min_consecutive_greens: int = 3
    week_days: float = 7.0


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class JobReadiness:
    job: str
    checks: list[Check]


def finished(job: Job) -> list[Build]:
    """The job's finished builds, newest first."""
    return [build for build in job.builds if not build.running]


def job_readiness(job: Job, criteria: Criteria) -> JobReadiness:
    """The job's checks against SIG Release's criteria."""
    builds = finished(job)
    passed = [build.overall.status is Status.PASS for build in builds]
    newest = builds[0].started if builds else 0
    week = [
        ok
        for build, ok in zip(builds, passed, strict=True)
        if newest - build.started <= criteria.week_days * 86400
    ]
    greens = next((i for i, ok in enumerate(passed) if not ok), len(passed))
    worst_streak = _longest_failure_streak(week)
    rate = sum(week) / len(week) if week else 0.0
    return JobReadiness(
        job.name,
        [
            Check(
                f"runs continuously: ≥ {criteria.runs} finished runs",
                len(builds) >= criteria.runs,
                f"{len(builds)} finished runs",
            ),
            Check(
                f"≥ {100 * criteria.min_pass_rate:.0f} % of a week's runs pass",
                bool(week) and rate >= criteria.min_pass_rate,
                f"{sum(week)} of {len(week)} runs passed ({100 * rate:.1f} %)",
            ),
            Check(
                f"≤ {criteria.max_consecutive_failures} failed runs in a row",
                worst_streak <= criteria.max_consecutive_failures,
                f"longest failure streak in the week: {worst_streak}",
            ),
            Check(
                f"≥ {criteria.min_consecutive_greens} green runs in a row",
                greens >= criteria.min_consecutive_greens,
                f"latest green streak: {greens}",
            ),
        ],
    )


def _longest_failure_streak(passed: Sequence[bool]) -> int:
    longest = current = 0
    for ok in passed:
        current = 0 if ok else current + 1
        longest = max(longest, current)
    return longest
