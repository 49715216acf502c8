"""The pass-rate trend: a dot per build coloured by its Overall cell, titles escaped, a useful axis."""

from __future__ import annotations

import re
from pathlib import Path

from winsuite_reports.model import Status
from winsuite_reports.results import load_history
from winsuite_reports.svg import Point
from winsuite_reports.svg import trend_chart
from winsuite_reports.svg import trend_points
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_job


def test_points_run_oldest_first_with_the_share_of_tests_that_passed(tmp_path: Path) -> None:
    ids = write_job(tmp_path, "job", {"a": "FPS", "b": "PPS", "c": "KPS"})
    (job,) = load_history(tmp_path, now=START).jobs
    assert trend_points(job) == [
        Point(ids[2], None, Status.PASS),  # only skips: no test ran
        Point(ids[1], 1.0, Status.PASS),
        Point(ids[0], 1 / 3, Status.FAIL),  # a flaky test is not a pass
    ]


def test_the_chart_has_a_dot_per_build_with_an_escaped_title() -> None:
    chart = str(trend_chart([Point("<b>1</b>", 0.5, Status.FAIL), Point("2", None, Status.PASS)]))
    assert chart.count("<circle") == 2
    assert 'class="sF"' in chart
    assert "<title>&lt;b&gt;1&lt;/b&gt;: 50.0 % of tests passed (Overall FAIL)</title>" in chart
    assert "<title>2: no test ran (Overall PASS)</title>" in chart
    assert "<b>" not in chart
    points = re.search(r'<polyline class="rate" points="([^"]*)"', chart)
    assert points is not None
    assert len(points.group(1).split()) == 1  # the build without a rate is left out of the line


def test_the_axis_starts_near_the_lowest_rate() -> None:
    labels = re.findall(r">(\d+%)</text>", str(trend_chart([Point("1", 0.97, Status.PASS)])))
    assert labels == ["90%", "95%", "100%"]
    labels = re.findall(r">(\d+%)</text>", str(trend_chart([Point("1", 0.42, Status.FAIL)])))
    assert labels == ["40%", "70%", "100%"]


def test_a_compact_chart_is_only_the_line() -> None:
    chart = str(trend_chart([Point("1", 1.0, Status.PASS), Point("2", 0.5, Status.FAIL)], compact=True))
    assert "<circle" not in chart
    assert "<text" not in chart
    assert "<polyline" in chart
