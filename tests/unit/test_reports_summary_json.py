"""`winsuite report --format json`: every tab's figures as data, with TestGrid's departures said beside them."""

from __future__ import annotations

import json
from pathlib import Path

from winsuite_reports.analysis import ReportOptions
from winsuite_reports.analysis import build_report
from winsuite_reports.departures import Departure
from winsuite_reports.results import load_history
from winsuite_reports.summary_json import FORMAT
from winsuite_reports.summary_json import json_summary
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_job


def summary_of(tmp_path: Path, rows: dict[str, str]) -> dict[str, object]:
    ids = write_job(tmp_path, "ci-windows", rows, metadata={"dashboard": "sig-windows-signal"})
    history = load_history(tmp_path, now=START)
    document = json.loads(json_summary(build_report(history, ReportOptions(), now=START + 7 * 3600)))
    assert document["format"] == FORMAT
    (tab,) = document["tabs"]
    tab["ids"] = ids
    return dict(tab)


def test_a_tab_gives_status_latest_green_recent_columns_and_alerts(tmp_path: Path) -> None:
    tab = summary_of(tmp_path, {"streak": "FKFFFP", "retried": "KKKKKK", "green": "PPPPPP", "skipped": "SSSSSS"})
    ids = tab["ids"]
    assert isinstance(ids, list)
    assert (tab["dashboard"], tab["tab"], tab["status"]) == ("sig-windows-signal", "ci-windows", "FAILING")
    assert tab["message"] == "1 consistently failing: streak"  # the Overall row passed in the flaky column
    assert tab["latest_green"] is None  # every column has a failure or a flake
    # The flaky column (the second newest) and the oldest passed; a flaky cell is neither pass nor failure.
    assert tab["recent_columns"] == {"window": 10, "passed": 2, "completed": 6}
    assert tab["cells"] == {"passed": 9, "filled": 24, "skipped": 6,
                            "testgrid": [Departure.SKIPPED_CELLS.note, Departure.CROSS_CHECKS_APART.note]}
    alerts = tab["alerts"]
    assert isinstance(alerts, list)
    assert alerts[0] == {"test": "streak", "fail_count": 4, "first_fail": ids[4], "latest_fail": ids[0],
                         "last_pass": ids[5], "message": "expected the pod to be Running, found Pending"}


def test_flakiness_per_test_says_which_tests_testgrid_would_not_rate(tmp_path: Path) -> None:
    tab = summary_of(tmp_path, {"retried": "KKKKKK", "shaky": "PFPFPP", "green": "PPPPPP"})
    flakiness = tab["flakiness"]
    assert isinstance(flakiness, dict)
    tests = {test.pop("test"): test for test in flakiness["tests"]}
    assert tests["retried"] == {"flakiness": 100.0, "passed": 0, "failed": 0, "flaky": 6, "infra_failures": 0,
                                "rated_by_testgrid": False}
    assert tests["shaky"] == {"flakiness": 33.333, "passed": 4, "failed": 2, "flaky": 0, "infra_failures": 0,
                              "rated_by_testgrid": True}
    assert flakiness["testgrid"] == [departure.note for departure in (
        Departure.RETRIED_EVERY_RUN, Departure.WINDOW_FROM_NEWEST_BUILD, Departure.OVERALL_ROW_NOT_RATED,
        Departure.INFRASTRUCTURE_BY_CLASS)]
