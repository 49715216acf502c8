"""The release verdict: KEP-116's "100 % green, non-flaky, continuously run" and SIG Release's criteria."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from winsuite_reports.job import History
from winsuite_reports.model import PlanItem
from winsuite_reports.readiness import Readiness
from winsuite_reports.readiness import RowState
from winsuite_reports.readiness import assess
from winsuite_reports.release_jobs import Criteria
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_job

GREEN = "P" * 10
BLOCKING = {"release-blocking": True}


def history(tmp_path: Path, jobs: Mapping[str, Mapping[str, str]], blocking: bool = True) -> History:
    for name, rows in jobs.items():
        properties = {row: {"category": "Core.Network" if "dns" in row else "Core.Pods"} for row in rows}
        write_job(tmp_path, name, rows, metadata=BLOCKING if blocking else {}, properties=properties)
    return load_history(tmp_path, now=START)


def verdict(tmp_path: Path, rows: Mapping[str, str], plan_items: list[PlanItem] | None = None) -> Readiness:
    return assess(history(tmp_path, {"ci-windows": rows}), Criteria(), plan_items)


def test_ready_when_every_applicable_test_passed_every_run(tmp_path: Path) -> None:
    result = verdict(tmp_path, {"pods": GREEN, "dns": GREEN, "linux only": "S" * 10, "excluded": "X" * 10})
    assert result.ready, result.reasons
    assert result.reasons == []
    assert result.blocking_jobs == ["ci-windows"]
    states = {test.row: test.state for test in result.tests}
    assert states == {
        "pods": RowState.GREEN,
        "dns": RowState.GREEN,
        "linux only": RowState.SKIPPED,
        "excluded": RowState.EXCLUDED,
    }
    assert all(check.ok for job in result.jobs for check in job.checks)


@pytest.mark.parametrize(
    ("codes", "state", "detail"),
    [
        ("FFPPPPPPPP", RowState.FAILING, "failed in the newest 2 and 2 of the last 10 runs of ci-windows"),
        ("PPFPPPPPPP", RowState.FLAKY, "flaky in 0, failed in 1 of the last 10 runs of ci-windows"),
        ("PKPPPPPPPP", RowState.FLAKY, "flaky in 1, failed in 0 of the last 10 runs of ci-windows"),
        ("PPFFFPPPPP", RowState.RECOVERED, "failed in 3 of the last 10 runs of ci-windows, passes since"),
        ("PPSPP_PPPP", RowState.NOT_CONTINUOUS, "ran in 8 of the last 10 runs of ci-windows"),
    ],
)
def test_a_test_that_is_not_green_every_run_blocks(
    tmp_path: Path, codes: str, state: RowState, detail: str
) -> None:
    result = verdict(tmp_path, {"t": codes, "other": GREEN})
    assert not result.ready
    (test,) = [test for test in result.tests if test.row == "t"]
    assert (test.state, test.detail) == (state, detail)
    assert f"1 applicable test {state.value}: t" in result.reasons


def test_only_the_last_n_runs_are_read(tmp_path: Path) -> None:
    result = verdict(tmp_path, {"t": GREEN + "FFF"})
    assert result.ready, result.reasons


def test_too_few_runs_are_not_continuous(tmp_path: Path) -> None:
    result = verdict(tmp_path, {"t": "PPPPP"})
    assert result.reasons == ["ci-windows: runs continuously: ≥ 10 finished runs — 5 finished runs"]


@pytest.mark.parametrize(
    ("codes", "reason"),
    [
        ("PPPFFFPPPPF", "≥ 75 % of a week's runs pass — 7 of 11 runs passed (63.6 %)"),
        ("PPP" + "I" * 11, "≤ 10 failed runs in a row — longest failure streak in the week: 11"),
        ("PPIPPPPPPP", "≥ 3 green runs in a row — latest green streak: 2"),
    ],
)
def test_sig_release_criteria(tmp_path: Path, codes: str, reason: str) -> None:
    # I marks a failed run (its test failed with a one-word, infrastructure message).
    result = verdict(tmp_path, {"t": codes})
    assert f"ci-windows: {reason}" in result.reasons


def test_the_pass_rate_reads_a_week_of_runs(tmp_path: Path) -> None:
    rows = {"t": "P" * 10 + "I" * 10}
    write_job(tmp_path, "ci-daily", rows, every=86400, metadata=BLOCKING)
    result = assess(load_history(tmp_path, now=START), Criteria())
    week = result.jobs[0].checks[1]
    assert (week.ok, week.detail) == (True, "8 of 8 runs passed (100.0 %)")


def test_a_test_in_two_blocking_jobs_takes_its_worst_state(tmp_path: Path) -> None:
    result = assess(history(tmp_path, {"ci-a": {"t": GREEN}, "ci-b": {"t": "PPPPFPPPPP"}}), Criteria())
    (test,) = result.tests
    assert test.state is RowState.FLAKY
    assert "ci-b" in test.detail


def test_jobs_not_marked_blocking_are_all_judged_and_the_page_says_so(tmp_path: Path) -> None:
    result = assess(history(tmp_path, {"ci-a": {"t": GREEN}}, blocking=False), Criteria())
    assert result.assumed_blocking
    assert result.blocking_jobs == ["ci-a"]


def test_named_blocking_jobs_replace_the_metadata(tmp_path: Path) -> None:
    jobs = history(tmp_path, {"ci-a": {"t": GREEN}, "ci-b": {"t": "F" * 10}})
    assert assess(jobs, Criteria(), blocking=["ci-a"]).ready
    assert not assess(jobs, Criteria()).ready
    nothing = assess(jobs, Criteria(), blocking=["ci-c"])
    assert nothing.reasons == ["none of the jobs named as release-blocking has results"]


def test_plan_items_show_their_tests_and_untested_items_block(tmp_path: Path) -> None:
    items = [
        PlanItem("pods", "adapted", "Pods", ["pods"]),
        PlanItem("dns", "substitute", "DNS", ["dns", "dns (windows)"]),
        PlanItem("gmsa", "windows-specific", "GMSA", ["gmsa"]),
        PlanItem("privileged", "never-works", "Privileged containers", []),
    ]
    result = verdict(tmp_path, {"pods": GREEN, "dns": "PPPPPFPPPP", "gmsa": "S" * 10}, plan_items=items)
    assert result.items is not None
    table = {item.item.id: (item.state, item.blocks) for item in result.items}
    assert table == {
        "pods": ("GREEN", False),
        "dns": ("FLAKY", True),
        "gmsa": ("UNTESTED", True),
        "privileged": ("UNTESTED", False),
    }
    dns = next(item for item in result.items if item.item.id == "dns")
    assert [(test.row, test.state) for test in dns.tests] == [
        ("dns", RowState.FLAKY),
        ("dns (windows)", RowState.NO_RESULT),
    ]
    assert "1 plan item without a test that ran: gmsa" in result.reasons


def test_categories_count_states(tmp_path: Path) -> None:
    result = verdict(tmp_path, {"pods a": GREEN, "pods b": "F" * 10, "dns": GREEN})
    assert result.categories["Core.Pods"][RowState.GREEN] == 1
    assert result.categories["Core.Pods"][RowState.FAILING] == 1
    assert result.categories["Core.Network"][RowState.GREEN] == 1


def test_a_job_where_nothing_ran_is_not_ready(tmp_path: Path) -> None:
    result = verdict(tmp_path, {"linux only": "S" * 10, "excluded": "X" * 10})
    assert result.reasons == ["no applicable test ran in the blocking jobs"]
