"""The engines' cross-check rows (--engine both) are winsuite's self-checks: the reports' pass rates and release
verdict leave them out and count them beside."""

from __future__ import annotations

from pathlib import Path

from winsuite_reports.analysis import Report
from winsuite_reports.analysis import ReportOptions
from winsuite_reports.analysis import build_report
from winsuite_reports.conventions import CROSS_CHECK_PREFIX
from winsuite_reports.conventions import cross_check_rows
from winsuite_reports.cross_checks import CrossChecks
from winsuite_reports.failure_counts import per_build
from winsuite_reports.markdown import markdown_summary
from winsuite_reports.model import Status
from winsuite_reports.readiness import assess
from winsuite_reports.release_jobs import Criteria
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_job

AGREES = f"{CROSS_CHECK_PREFIX}[sig-windows] pods run"
DISAGREES = f"{CROSS_CHECK_PREFIX}[sig-windows] dns resolves"
NOT_COMPARED = f"{CROSS_CHECK_PREFIX}[sig-windows] hostprocess runs"
NOW = START + 86400


def report(tmp_path: Path, rows: dict[str, str]) -> Report:
    write_job(tmp_path, "ci-windows", rows, metadata={"release-blocking": True})
    return build_report(load_history(tmp_path, now=NOW), ReportOptions(), now=NOW)


def test_a_cross_check_is_told_by_its_name() -> None:
    names = ["[sig-windows] pods run", AGREES, "[winsuite] something else", DISAGREES]
    assert cross_check_rows(names) == [AGREES, DISAGREES]
    assert cross_check_rows(iter(names)) == [AGREES, DISAGREES]


def test_pass_rates_leave_the_cross_checks_out_and_count_them_beside(tmp_path: Path) -> None:
    tab = report(tmp_path, {"[sig-windows] pods run": "PP", "[sig-windows] dns resolves": "PF",
                            AGREES: "PP", DISAGREES: "FF", NOT_COMPARED: "SP"}).tabs[0]
    # The product's tests: 3 of 4 cells passed; the cross-checks' 6 cells are no part of it.
    assert (tab.failures.passed, tab.failures.ran, tab.failures.pass_rate) == (3, 4, 0.75)
    assert tab.failures.counts.label() == "unclassified 1"  # the disagreements are no failure of the product
    assert tab.failures.cross_checks == CrossChecks(agree=3, disagree=2, not_compared=1)
    assert tab.failures.cross_checks.label() == "3 agree, 2 disagree, 1 not compared"
    assert [counts.label() for counts in per_build(tab.job).values()] == ["unclassified 1"]
    assert [point.rate for point in tab.trend] == [0.5, 1.0]  # oldest first
    summary = tab.summary  # TestGrid's cells count the Overall row too: both builds failed
    assert (summary.passing_cells, summary.filled_cells, summary.skipped_cells) == (3, 6, 0)


def test_the_verdict_judges_the_product_and_counts_the_cross_checks_apart(tmp_path: Path) -> None:
    rows = {"[sig-windows] pods run": "P" * 10, AGREES: "P" * 10, DISAGREES: "F" * 10, NOT_COMPARED: "S" * 10}
    write_job(tmp_path, "ci-windows", rows, metadata={"release-blocking": True})
    readiness = assess(load_history(tmp_path, now=NOW), Criteria())
    assert [test.row for test in readiness.tests] == ["[sig-windows] pods run"]
    assert readiness.blocking_tests == []
    assert not any(CROSS_CHECK_PREFIX in reason for reason in readiness.reasons)
    assert readiness.cross_checks == CrossChecks(agree=10, disagree=10, not_compared=10)


def test_the_pages_say_the_cross_checks_apart(tmp_path: Path) -> None:
    built = report(tmp_path, {"[sig-windows] pods run": "PP", AGREES: "PP", DISAGREES: "PF"})
    assert ("The engines' cross-checks in those runs, winsuite's self-checks and no part of the verdict: "
            "3 agree, 1 disagree.") in markdown_summary(built)
    assert built.tabs[0].summary.passing_cells == 3  # 2 of the test, 1 of the Overall row
    assert built.tabs[0].job.builds[0].counts[Status.PASS] == 3  # the build's own counts keep every row
