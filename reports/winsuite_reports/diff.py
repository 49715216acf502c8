"""What changed between two builds of a job: new failures, fixes, new flakes, exclusions that now pass."""

from __future__ import annotations

from dataclasses import dataclass

from winsuite_reports.job import Job
from winsuite_reports.model import NO_RESULT
from winsuite_reports.model import Build
from winsuite_reports.model import ReportError
from winsuite_reports.model import Status


@dataclass(frozen=True)
class RunDiff:
    job: str
    old: str  # build ids
    new: str
    new_failures: list[str]  # FAIL now, not FAIL before (or absent before)
    fixed: list[str]  # FAIL or FLAKY before, PASS now
    newly_flaky: list[str]  # FLAKY now, not FLAKY before
    unexclude: list[tuple[str, str]]  # (row, exclusion reason): excluded, yet passed in the new build
    added: list[str]  # rows with a result only in the new build
    removed: list[str]  # rows with a result only in the old build

    @property
    def empty(self) -> bool:
        return not (self.new_failures or self.fixed or self.newly_flaky or self.unexclude)


def diff_builds(job: Job, old: Build, new: Build) -> RunDiff:
    rows = sorted(old.cells.keys() | new.cells.keys())
    before = {key: old.cells.get(key, NO_RESULT).status for key in rows}
    after = {key: new.cells.get(key, NO_RESULT).status for key in rows}
    return RunDiff(
        job=job.name,
        old=old.id,
        new=new.id,
        new_failures=[k for k in rows if after[k] is Status.FAIL and before[k] is not Status.FAIL],
        fixed=[k for k in rows if before[k].failing and after[k] is Status.PASS],
        newly_flaky=[k for k in rows if after[k] is Status.FLAKY and before[k] is not Status.FLAKY],
        unexclude=[(k, new.excluded[k]) for k in rows if k in new.excluded and after[k] is Status.PASS],
        added=[k for k in rows if before[k] is Status.NO_RESULT],
        removed=[k for k in rows if after[k] is Status.NO_RESULT],
    )


def latest_diff(job: Job) -> RunDiff | None:
    """The newest finished build against the one before it; None with fewer than two."""
    finished = [build for build in job.builds if not build.running]
    return diff_builds(job, finished[1], finished[0]) if len(finished) >= 2 else None


def diff_between(job: Job, old_id: str, new_id: str) -> RunDiff:
    """Any two given builds of the job."""
    builds = {build.id: build for build in job.builds}
    missing = [build_id for build_id in (old_id, new_id) if build_id not in builds]
    if missing:
        known = ", ".join(build.id for build in job.builds[:5]) or "none"
        raise ReportError(f"job {job.name} has no build {missing[0]} (newest builds: {known})")
    return diff_builds(job, builds[old_id], builds[new_id])
