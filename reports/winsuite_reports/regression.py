"""What changed between a job's last green build and the first red one after it: along each recorded axis of the
environment (versions, Windows builds, runtimes, images) and in the tests that newly fail."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from winsuite_reports.diff import diff_builds
from winsuite_reports.environment import AxisChange
from winsuite_reports.environment import changes
from winsuite_reports.job import Job
from winsuite_reports.model import Build
from winsuite_reports.model import Status


@dataclass(frozen=True)
class GreenToRed:
    green: Build  # the last build that passed before the newest failing streak
    red: Build  # the first failing build after it
    environment: list[AxisChange]  # every axis either build records
    newly_failing: list[str]  # tests that fail in the red build and did not in the green one

    @property
    def changed(self) -> list[AxisChange]:
        return [change for change in self.environment if change.changed]


def green_to_red(job: Job) -> GreenToRed | None:
    """The newest pass-then-fail pair of finished builds; None when the job never went from green to red."""
    finished = [build for build in job.builds if not build.running]  # newest first
    for newer, older in itertools.pairwise(finished):
        if older.overall.status.passing and newer.overall.status is Status.FAIL:
            return GreenToRed(older, newer, changes(older, newer), diff_builds(job, older, newer).new_failures)
    return None
