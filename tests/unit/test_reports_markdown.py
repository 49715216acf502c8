"""The markdown summary: verdict, tabs, what changed, flaky tests; names stay plain text."""

from __future__ import annotations

from pathlib import Path

from winsuite_reports.analysis import ReportOptions
from winsuite_reports.analysis import build_report
from winsuite_reports.markdown import markdown_summary
from winsuite_reports.markdown import text
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_job


def test_markup_in_names_is_escaped() -> None:
    assert text("[sig-x] a|b `c` <script>") == "\\[sig-x\\] a\\|b \\`c\\` &lt;script&gt;"
    assert text("two\nlines") == "two lines"


def test_the_summary_reads_verdict_tabs_diff_and_flakes(tmp_path: Path) -> None:
    rows = {
        "[sig-network] DNS [Conformance]": "FPFPPPPPPP",
        "pods": "PPPPPPPPPP",
        "new | broken": "FPPPPPPPPP",
    }
    ids = write_job(tmp_path, "ci-windows", rows, metadata={"release-blocking": True})
    report = build_report(load_history(tmp_path, now=START), ReportOptions(), now=START)
    summary = markdown_summary(report)
    lines = summary.splitlines()
    assert lines[0] == "### Release readiness: **NOT READY**"
    assert "- ci-windows: ≥ 3 green runs in a row — latest green streak: 0" in lines
    tab_line = f"| ci-windows | FLAKY | 80.0 % | 90.0 % · 90.0 % | unclassified 3 | 2026-01-01 09:00 UTC | {ids[1]} |"
    assert tab_line in lines
    assert (
        f"**ci-windows** {ids[1]} → {ids[0]}: 2 new failures, 0 fixed, 0 newly flaky, "
        "0 excluded tests now passing" in lines
    )
    assert "- new failure: new \\| broken" in lines
    assert "| 20.0 % | \\[sig-network\\] DNS \\[Conformance\\] | ci-windows |" in lines
