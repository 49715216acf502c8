"""`--format json`: each tab's TestGrid figures as data (status, latest green, recent columns, alerts, flakiness)."""

from __future__ import annotations

import json

from winsuite_reports.analysis import Report
from winsuite_reports.analysis import TabReport
from winsuite_reports.departures import CELLS_FIGURE
from winsuite_reports.departures import FLAKINESS_FIGURE
from winsuite_reports.departures import Departure

FORMAT = "winsuite.report/v1"
JsonObject = dict[str, object]


def json_summary(report: Report) -> str:
    document = {
        "format": FORMAT,
        "generated": round(report.generated),
        "tabs": [_tab(tab, report.options.thresholds.num_columns_recent) for tab in report.tabs],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _tab(tab: TabReport, recent: int) -> JsonObject:
    summary, flakiness = tab.summary, tab.flakiness
    return {
        "dashboard": tab.job.dashboard,
        "tab": tab.job.tab,
        "job": tab.job.name,
        "status": summary.status.value,
        "message": summary.reason,
        "stats": summary.stats,
        "last_run": summary.last_run or None,
        "latest_green": summary.latest_green or None,
        "recent_columns": {
            "window": recent,
            "passed": summary.passing_columns,
            "completed": summary.completed_columns,
        },
        "cells": {
            "passed": summary.passing_cells,
            "filled": summary.filled_cells,
            "skipped": summary.skipped_cells,
            "testgrid": _notes(CELLS_FIGURE),
        },
        "alerts": [
            {
                "test": alert.row,
                "fail_count": alert.fail_count,
                "first_fail": alert.first_fail,
                "latest_fail": alert.latest_fail,
                "last_pass": alert.last_pass or None,
                "message": alert.message,
            }
            for alert in summary.alerts
        ],
        "flakiness": {
            "days": flakiness.days,
            "builds": flakiness.builds,
            "average": round(flakiness.average, 3),
            "testgrid": _notes(FLAKINESS_FIGURE),
            "tests": [
                {
                    "test": test.row,
                    "flakiness": round(test.flakiness, 3),
                    "passed": test.passed,
                    "failed": test.failed,
                    "flaky": test.flaky,
                    "infra_failures": test.infra_failures,
                    "rated_by_testgrid": test.rated_by_testgrid,
                }
                for test in flakiness.tests
            ],
        },
        "failures": tab.failures.as_json(),
    }


def _notes(departures: tuple[Departure, ...]) -> list[str]:
    return [departure.note for departure in departures]
