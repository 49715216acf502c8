"""The written dashboard: its pages, links that resolve offline, and text from artifacts kept as text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from markupsafe import escape

from winsuite_reports.analysis import ReportOptions
from winsuite_reports.analysis import build_report
from winsuite_reports.departures import FLAKINESS_FIGURE
from winsuite_reports.departures import Departure
from winsuite_reports.model import PlanItem
from winsuite_reports.model import ReportError
from winsuite_reports.render import write_dashboard
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_job

HOSTILE = '<script>document.title="pwned"</script>'
HOSTILE_MESSAGE = "<img src=x onerror=alert(1)>"


@pytest.fixture
def dashboard(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    write_job(
        results,
        "ci-windows",
        {f"[sig-windows] {HOSTILE} [Serial]": "FPP", "[sig-node] Pods should run [Conformance]": "PPP"},
        metadata={"release-blocking": True, "tab": "<b>windows</b>", "kubernetes-version": "v1.36.3"},
        properties={f"[sig-windows] {HOSTILE} [Serial]": {"diagnostics": "artifacts/hostile/"}},
        messages={f"[sig-windows] {HOSTILE} [Serial]": HOSTILE_MESSAGE},
    )
    write_job(results, "ci linux #2", {"t": "PP"})
    history = load_history(results, now=START)
    plan = [PlanItem("pods", "adapted", "Pods <run>", ["[sig-node] Pods should run [Conformance]"])]
    report = build_report(history, ReportOptions(), now=START + 86400, plan_items=plan)
    write_dashboard(report, tmp_path / "out")
    return tmp_path / "out"


def pages(root: Path) -> dict[str, str]:
    return {str(path.relative_to(root)): path.read_text(encoding="utf-8") for path in root.rglob("*.html")}


def grid_json(page: str) -> dict[str, object]:
    match = re.search(r'<script type="application/json" id="grid-data">(.*?)</script>', page, re.S)
    assert match is not None
    data = json.loads(match.group(1))
    assert isinstance(data, dict)
    return data


def test_every_page_is_written(dashboard: Path) -> None:
    assert sorted(pages(dashboard)) == [
        "failures.html",
        "index.html",
        "jobs/ci-linux-2/categories.html",
        "jobs/ci-linux-2/diff.html",
        "jobs/ci-linux-2/failures.html",
        "jobs/ci-linux-2/flaky.html",
        "jobs/ci-linux-2/grid.html",
        "jobs/ci-windows/categories.html",
        "jobs/ci-windows/diff.html",
        "jobs/ci-windows/failures.html",
        "jobs/ci-windows/flaky.html",
        "jobs/ci-windows/grid.html",
        "readiness.html",
    ]


def test_text_from_artifacts_never_becomes_markup(dashboard: Path) -> None:
    for name, page in pages(dashboard).items():
        for raw in (HOSTILE, HOSTILE_MESSAGE, "<b>windows</b>", "Pods <run>"):
            assert raw not in page, f"{raw!r} unescaped in {name}"
    index = (dashboard / "index.html").read_text()
    assert "&lt;b&gt;windows&lt;/b&gt;" in index
    grid = (dashboard / "jobs/ci-windows/grid.html").read_text()
    # Inside the embedded JSON, < and > are escaped so no </script> can end the block early.
    assert "\\u003cscript\\u003e" in grid
    rows = grid_json(grid)["rows"]
    assert isinstance(rows, list)
    assert f"[sig-windows] {HOSTILE} [Serial]" in [row[0] for row in rows]


def test_the_dashboard_needs_no_network(dashboard: Path) -> None:
    for name, page in pages(dashboard).items():
        assert not re.search(r"(?:https?:)?//[a-z]", page, re.I), f"external reference in {name}"


def test_build_and_diagnostics_links_resolve_from_the_grid_page(dashboard: Path) -> None:
    page_dir = dashboard / "jobs" / "ci-windows"
    data = grid_json((page_dir / "grid.html").read_text())
    builds = data["builds"]
    assert isinstance(builds, list)
    newest = page_dir / builds[0]["h"]
    assert (newest / "finished.json").is_file()
    strings = data["strings"]
    assert isinstance(strings, list)
    assert "artifacts/hostile/" in strings
    odd = grid_json((dashboard / "jobs" / "ci-linux-2" / "grid.html").read_text())["builds"]
    assert isinstance(odd, list)
    assert "%23" in odd[0]["h"]  # "#" in a directory name must not start a fragment


def test_the_index_shows_statuses_and_the_verdict(dashboard: Path) -> None:
    index = (dashboard / "index.html").read_text()
    assert "NOT READY" in index
    assert 'class="badge FLAKY"' in index
    assert index.count("<svg") == 2
    readiness = (dashboard / "readiness.html").read_text()
    assert "KEP plan items" in readiness
    assert "Pods &lt;run&gt;" in readiness


def test_the_diff_page_lists_the_fix(dashboard: Path) -> None:
    diff = (dashboard / "jobs/ci-windows/diff.html").read_text()
    assert "New failures (1)" in diff
    assert "&lt;script&gt;" in diff


def test_requested_diffs_and_blocking_jobs_must_exist(tmp_path: Path) -> None:
    write_job(tmp_path, "ci", {"t": "PP"})
    history = load_history(tmp_path, now=START)
    with pytest.raises(ReportError, match=r"no job nope under .* \(jobs: ci\)"):
        build_report(history, ReportOptions(diffs=(("nope", "1", "2"),)), now=START)
    with pytest.raises(ReportError, match="no job other"):
        build_report(history, ReportOptions(blocking=("other",)), now=START)
    with pytest.raises(ReportError, match="has no build 1"):
        build_report(history, ReportOptions(diffs=(("ci", "1", "2"),)), now=START)


def test_each_departure_from_testgrid_is_stated_beside_its_figure(tmp_path: Path) -> None:
    results = tmp_path / "results"
    write_job(results, "ci-windows", {"retried": "KKK", "skipped": "SSS", "green": "PPP"})
    report = build_report(load_history(results, now=START), ReportOptions(), now=START + 86400)
    written = pages(write_dashboard(report, tmp_path / "out").parent)
    index, grid = written["index.html"], written["jobs/ci-windows/grid.html"]
    flaky = written["jobs/ci-windows/flaky.html"]
    cells_note = str(escape(Departure.SKIPPED_CELLS.marked_note))
    assert "(6 of 9 or 66.7% cells, 3 skipped)&nbsp;*" in index and cells_note in index  # beside the cells figure
    assert "3 skipped)&nbsp;*" in grid and cells_note in grid  # the tab's header, whose stats line has skips apart
    for page in (index, flaky):
        assert "retried&nbsp;†" in page  # rated here, not by TestGrid
        for departure in FLAKINESS_FIGURE:
            assert str(escape(departure.marked_note)) in page
