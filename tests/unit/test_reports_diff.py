"""Run diffs: new failures, fixes, new flakes and excluded tests that now pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from winsuite_reports.diff import diff_between
from winsuite_reports.diff import latest_diff
from winsuite_reports.job import Job
from winsuite_reports.model import ReportError
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_job


def job_of(tmp_path: Path, rows: dict[str, str]) -> Job:
    write_job(tmp_path, "job", rows)
    (job,) = load_history(tmp_path, now=START).jobs
    return job


def test_the_latest_two_builds_are_compared(tmp_path: Path) -> None:
    job = job_of(
        tmp_path,
        {
            "broke": "FP",
            "still broken": "FF",
            "appeared broken": "F_",
            "fixed": "PF",
            "fixed after a retry": "PK",
            "started flaking": "KP",
            "still flaky": "KK",
            "excluded, passes": "XS",
            "excluded, still skipped": "SS",
            "steady": "PP",
            "removed": "_P",
        },
    )
    diff = latest_diff(job)
    assert diff is not None
    assert (diff.old, diff.new) == (job.builds[1].id, job.builds[0].id)
    assert diff.new_failures == ["appeared broken", "broke"]
    assert diff.fixed == ["fixed", "fixed after a retry"]
    assert diff.newly_flaky == ["started flaking"]
    assert diff.unexclude == [("excluded, passes", "known not to work on Windows")]
    assert diff.added == ["appeared broken"]
    assert diff.removed == ["removed"]
    assert not diff.empty


def test_any_two_builds_can_be_compared(tmp_path: Path) -> None:
    job = job_of(tmp_path, {"t": "PFP"})
    newest, _, oldest = (build.id for build in job.builds)
    diff = diff_between(job, oldest, newest)
    assert (diff.new_failures, diff.fixed, diff.empty) == ([], [], True)
    assert diff_between(job, oldest, job.builds[1].id).new_failures == ["t"]


def test_an_unknown_build_names_the_ones_that_exist(tmp_path: Path) -> None:
    job = job_of(tmp_path, {"t": "PP"})
    with pytest.raises(ReportError, match=f"job job has no build 123 \\(newest builds: {job.builds[0].id}"):
        diff_between(job, "123", job.builds[0].id)


def test_no_diff_with_a_single_finished_build(tmp_path: Path) -> None:
    assert latest_diff(job_of(tmp_path, {"t": "P"})) is None
