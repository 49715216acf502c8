"""Tab statuses on made-up histories: every status, TestGrid's precedence, the alert rule, latest green."""

from __future__ import annotations

from pathlib import Path

import pytest

from winsuite_reports.job import Job
from winsuite_reports.results import load_history
from winsuite_reports.status import TabStatus
from winsuite_reports.status import Thresholds
from winsuite_reports.status import row_alert
from winsuite_reports.status import summarize
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_job

HOUR = 3600


def job_of(tmp_path: Path, rows: dict[str, str]) -> Job:
    write_job(tmp_path, "job", rows, every=HOUR)
    (job,) = load_history(tmp_path, now=START).jobs
    return job


def newest_start(job: Job) -> float:
    return job.builds[0].started


def status_of(tmp_path: Path, rows: dict[str, str], thresholds: Thresholds | None = None) -> TabStatus:
    job = job_of(tmp_path, rows)
    return summarize(job, thresholds or Thresholds(), newest_start(job) + HOUR).status


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ({"a": "PPPPP", "b": "SSSSS"}, TabStatus.PASSING),  # a skip is a pass to TestGrid
        ({"a": "PPFPP", "b": "PPPPP"}, TabStatus.FLAKY),  # one failure is not consistent
        ({"a": "PKPPP", "b": "PPPPP"}, TabStatus.FLAKY),  # a retried pass is flaky
        ({"a": "FFPPP", "b": "PPPPP"}, TabStatus.FLAKY),  # two in a row do not alert
        ({"a": "FFFPP", "b": "PPPPP"}, TabStatus.FAILING),  # three in a row do
        ({"a": "P" * 10 + "FFFF", "b": "P" * 14}, TabStatus.PASSING),  # old failures are out of the window
    ],
)
def test_statuses_from_recent_columns(tmp_path: Path, rows: dict[str, str], expected: TabStatus) -> None:
    assert status_of(tmp_path, rows) is expected


def test_a_shorter_window_forgets_sooner(tmp_path: Path) -> None:
    rows = {"a": "PPPFP"}
    assert status_of(tmp_path, rows, Thresholds(num_columns_recent=3)) is TabStatus.PASSING
    assert status_of(tmp_path, rows, Thresholds(num_columns_recent=4)) is TabStatus.FLAKY


def test_no_alerts_when_num_failures_to_alert_is_zero(tmp_path: Path) -> None:
    assert status_of(tmp_path, {"a": "FFFFF"}, Thresholds(num_failures_to_alert=0)) is TabStatus.FLAKY


def test_stale_when_the_newest_column_is_older_than_stale_hours_and_it_beats_failing(tmp_path: Path) -> None:
    job = job_of(tmp_path, {"a": "FFFPP"})
    thresholds = Thresholds(stale_hours=24)
    assert summarize(job, thresholds, newest_start(job) + 23 * HOUR).status is TabStatus.FAILING
    stale = summarize(job, thresholds, newest_start(job) + 25 * HOUR)
    assert stale.status is TabStatus.STALE
    assert "25 h old" in stale.reason


def test_broken_when_a_recent_column_fails_beyond_the_threshold_and_it_beats_stale(tmp_path: Path) -> None:
    job = job_of(tmp_path, {"a": "PFP", "b": "PFP", "c": "PPP", "d": "PPP"})
    # The middle column: a, b and the Overall row fail out of 5 rows: 60 %.
    late = newest_start(job) + 100 * HOUR
    assert (
        summarize(job, Thresholds(broken_column_threshold=0.5, stale_hours=1), late).status
        is TabStatus.BROKEN
    )
    assert summarize(job, Thresholds(broken_column_threshold=0.6), late).status is TabStatus.FLAKY


def test_unknown_when_every_recent_column_is_still_running(tmp_path: Path) -> None:
    write_job(tmp_path, "job", {"a": "P"})
    (tmp_path / "job" / "20260101000000" / "finished.json").unlink()
    (job,) = load_history(tmp_path, now=START + HOUR).jobs
    assert job.builds[0].running
    assert summarize(job, Thresholds(), START + HOUR).status is TabStatus.UNKNOWN


def test_stale_without_any_build(tmp_path: Path) -> None:
    job = Job("empty", tmp_path, "default", "empty", False, [], {})
    summary = summarize(job, Thresholds(), START)
    assert (summary.status, summary.reason) == (TabStatus.STALE, "no completed results")


def test_an_alert_records_the_outage(tmp_path: Path) -> None:
    job = job_of(tmp_path, {"a": "FFFFPP"})
    ids = [build.id for build in job.builds]
    alert = row_alert("a", list(zip(ids, job.cells("a"), strict=True)), Thresholds())
    assert alert is not None
    assert (alert.fail_count, alert.first_fail, alert.latest_fail, alert.last_pass) == (
        4,
        ids[3],
        ids[0],
        ids[4],
    )
    assert alert.message == "expected the pod to be Running, found Pending"


@pytest.mark.parametrize(
    ("codes", "alerts"),
    [
        ("FFF", True),
        ("FFKF", False),  # a flaky cell resets the count
        ("FFPFFF", False),  # the newest pass closes it before three failures
        ("FFFK", True),  # a flake after the outage only ends the walk
        ("_F_F_F", True),  # no-result cells do not break a streak
    ],
)
def test_the_alert_rule(tmp_path: Path, codes: str, alerts: bool) -> None:
    job = job_of(tmp_path, {"a": codes, "b": "P" * len(codes)})
    ids = [build.id for build in job.builds]
    assert (row_alert("a", list(zip(ids, job.cells("a"), strict=True)), Thresholds()) is not None) is alerts


def test_two_passes_to_disable_keep_an_outage_open_across_one_pass(tmp_path: Path) -> None:
    job = job_of(tmp_path, {"a": "PFFF"})
    columns = list(zip([build.id for build in job.builds], job.cells("a"), strict=True))
    assert row_alert("a", columns, Thresholds()) is None
    assert row_alert("a", columns, Thresholds(num_passes_to_disable_alert=2)) is not None


def test_latest_green_pass_rate_and_stats(tmp_path: Path) -> None:
    job = job_of(tmp_path, {"a": "FKPP", "b": "PPPF"})
    summary = summarize(job, Thresholds(), newest_start(job))
    assert summary.latest_green == job.builds[2].id
    # Columns: a fails; a is flaky (neither pass nor fail: the column passed); green; b fails. Cells count the
    # Overall row too.
    assert summary.pass_rate == 0.5
    assert summary.stats == "2 of 4 (50.0%) recent columns passed (7 of 12 or 58.3% cells)"
    assert summary.last_run == job.builds[0].started


def test_skipped_cells_are_counted_apart_from_passed_ones(tmp_path: Path) -> None:
    """285 rows of which 225 skipped do not make "285 of 285 cells passed"."""
    job = job_of(tmp_path, {"a": "P", "b": "S", "c": "S", "d": "F"})
    summary = summarize(job, Thresholds(), newest_start(job))
    assert (summary.passing_cells, summary.filled_cells, summary.skipped_cells) == (1, 3, 2)
    assert summary.stats == "0 of 1 (0.0%) recent columns passed (1 of 3 or 33.3% cells, 2 skipped)"


def test_a_column_of_skips_stays_green_but_passes_no_cell(tmp_path: Path) -> None:
    job = job_of(tmp_path, {"a": "S", "b": "S"})
    summary = summarize(job, Thresholds(), newest_start(job))
    assert summary.passing_columns == 1 and summary.passing_cells == 1  # the Overall row passed
    assert summary.stats == "1 of 1 (100.0%) recent columns passed (1 of 1 or 100.0% cells, 2 skipped)"


def test_a_flake_does_not_break_an_outage(tmp_path: Path) -> None:
    """fail, flaky, fail, fail, fail, pass (newest first): TestGrid counts 4 failures and names the newest build."""
    job = job_of(tmp_path, {"a": "FKFFFP", "b": "PPPPPP"})
    ids = [build.id for build in job.builds]
    alert = row_alert("a", list(zip(ids, job.cells("a"), strict=True)), Thresholds())
    assert alert is not None
    assert (alert.fail_count, alert.first_fail, alert.latest_fail, alert.last_pass) == (4, ids[4], ids[0], ids[5])


def test_failures_before_a_pass_that_does_not_close_count_toward_the_outage(tmp_path: Path) -> None:
    job = job_of(tmp_path, {"a": "FPFFFP"})
    ids = [build.id for build in job.builds]
    alert = row_alert("a", list(zip(ids, job.cells("a"), strict=True)), Thresholds(num_passes_to_disable_alert=2))
    assert alert is not None
    assert (alert.fail_count, alert.first_fail, alert.latest_fail, alert.last_pass) == (4, ids[4], ids[0], ids[5])


def test_a_test_retried_in_every_build_leaves_every_column_passed(tmp_path: Path) -> None:
    job = job_of(tmp_path, {"a": "K" * 10, "b": "P" * 10})
    summary = summarize(job, Thresholds(), newest_start(job))
    assert (summary.passing_columns, summary.completed_columns) == (10, 10)
    assert summary.status is TabStatus.FLAKY  # a flaky cell is still no pass
    assert summary.latest_green == ""


def test_a_running_column_takes_a_place_in_the_recent_columns(tmp_path: Path) -> None:
    """TestGrid's recent-columns count reads the newest N columns, a running one included (with no result)."""
    write_job(tmp_path, "job", {"a": "PPPF"})
    (tmp_path / "job" / "20260101030000" / "finished.json").unlink()
    (job,) = load_history(tmp_path, now=START + 4 * HOUR).jobs
    summary = summarize(job, Thresholds(num_columns_recent=3), START + 4 * HOUR)
    assert job.builds[0].running
    # The running column's test passed, so it counts as passed; the failed oldest column is out of the window.
    assert (summary.passing_columns, summary.completed_columns) == (3, 3)
    assert summary.status is TabStatus.FLAKY  # the tab's status reads 3 finished columns


def test_rows_without_a_recent_result_raise_no_alert(tmp_path: Path) -> None:
    job = job_of(tmp_path, {"gone": "___FFF", "kept": "PPPPPP"})
    assert summarize(job, Thresholds(num_columns_recent=3), newest_start(job)).alerts == []
    assert [a.row for a in summarize(job, Thresholds(num_columns_recent=4), newest_start(job)).alerts] == ["gone"]


def test_latest_green_reads_only_rows_with_a_recent_result(tmp_path: Path) -> None:
    job = job_of(tmp_path, {"gone": "___K", "kept": "FFFP"})  # the oldest build passed, with a flake
    assert summarize(job, Thresholds(num_columns_recent=3), newest_start(job)).latest_green == job.builds[3].id
    assert summarize(job, Thresholds(num_columns_recent=4), newest_start(job)).latest_green == ""
