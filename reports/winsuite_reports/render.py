"""Writes the dashboard: the index, readiness and Failures pages, and per tab its grid, categories, flakiness, run
diff and Failures pages."""

from __future__ import annotations

import os
from collections.abc import Callable
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from winsuite_reports.analysis import Report
from winsuite_reports.analysis import TabReport
from winsuite_reports.categories import HISTORY
from winsuite_reports.categories import LISTED_CASES
from winsuite_reports.categories import categories
from winsuite_reports.categories_page import case_rows
from winsuite_reports.collection import collection_paused
from winsuite_reports.compare import STATUS_WORDS
from winsuite_reports.compare import Comparison
from winsuite_reports.compare import Verdict
from winsuite_reports.departures import CELLS_FIGURE
from winsuite_reports.departures import FLAKINESS_FIGURE
from winsuite_reports.departures import Departure
from winsuite_reports.failures_page import page_context
from winsuite_reports.flakiness import IGNORE_FAILURES_IN_A_ROW
from winsuite_reports.formats import pct
from winsuite_reports.formats import when
from winsuite_reports.grid import CLASS_ICONS
from winsuite_reports.grid import GridRows
from winsuite_reports.grid import grid_data
from winsuite_reports.grid import grid_json
from winsuite_reports.job import Job
from winsuite_reports.model import Build
from winsuite_reports.model import Status
from winsuite_reports.readiness import RowState
from winsuite_reports.split import both
from winsuite_reports.svg import trend_chart

COLUMN_CHOICES = (25, 50, 100, 200)
DEFAULT_GRID_COLUMNS = 50  # the grid draws this many builds at first; the page can show all
# Grid cells (rows x builds, over every tab) from which the grid pages are written beside the others (reports.split):
# measured, the fork and its copied pages cost about what a tab of a thousand rows and 50 builds takes to write its
# grid page; from there on the page's share of the writing grows with the cells.
SPLIT_FROM_CELLS = 50_000
SPARKLINE_BUILDS = 60
COMPARE_PAGE = "compare.html"
JOB_TOKEN, BUILD_TOKEN = "<job>", "<build>"  # of --build-url, as TestGrid's link templates write them
FAILURES_PAGE = "failures.html"


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("winsuite_reports", "templates"),
        autoescape=True,  # every name, message and reason from the artifacts is text, never markup
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        # Compiling the templates is a third of a small report's rendering: kept compiled between reports (jinja's
        # per-user directory under the system's temporary directory, checked against each template's source).
        bytecode_cache=jinja2.FileSystemBytecodeCache(),
    )
    env.filters["when"] = when
    env.filters["pct"] = pct
    # Where a figure departs from TestGrid's, the page says so beside it.
    env.globals["cells_notes"] = [departure.marked_note for departure in CELLS_FIGURE]
    env.globals["flakiness_notes"] = [departure.marked_note for departure in FLAKINESS_FIGURE]
    env.globals["skipped_mark"] = Departure.SKIPPED_CELLS.mark
    env.globals["unrated_mark"] = Departure.RETRIED_EVERY_RUN.mark
    return env


@collection_paused()
def write_dashboard(report: Report, output: Path, *, grid_columns: int = DEFAULT_GRID_COLUMNS,
                    build_url: str = "", compared: bool = False) -> Path:
    """Write every page under `output`; returns the index page. `build_url` is where build links point, as a
    template of TestGrid's kind (`<job>`, `<build>`); "" links each job's own directory."""
    env = environment()
    output.mkdir(parents=True, exist_ok=True)
    page_dirs = [output / "jobs" / tab.slug for tab in report.tabs]
    for page_dir in page_dirs:
        page_dir.mkdir(parents=True, exist_ok=True)

    def grid_pages() -> None:
        for tab, page_dir in zip(report.tabs, page_dirs, strict=True):
            _write_grid(env, report, tab, page_dir, grid_columns, build_url)

    def other_pages() -> None:
        _write(env, "index.html.j2", output / "index.html", report=report, root="", sparkline=_sparkline,
               compare_page=COMPARE_PAGE if compared else "")
        _write(env, "readiness.html.j2", output / "readiness.html", report=report, root="", states=list(RowState))
        _write(env, "failures.html.j2", output / FAILURES_PAGE, report=report, root="", tab=None,
               **page_context(report.clusters, _build_links(report.tabs, output, build_url), across_jobs=True))
        for tab, page_dir in zip(report.tabs, page_dirs, strict=True):
            _write_tab(env, report, tab, page_dir, build_url)

    # A big tab's grid page takes as long as its other pages: written beside them where a second CPU can.
    cells = sum(len(tab.job.rows) * max(1, len(tab.job.builds)) for tab in report.tabs)
    both(grid_pages, other_pages, split=cells >= SPLIT_FROM_CELLS)
    return output / "index.html"


def _write_grid(
    env: jinja2.Environment, report: Report, tab: TabReport, page_dir: Path, grid_columns: int, build_url: str
) -> None:
    link = _build_links([tab], page_dir, build_url)

    def build_href(build: Build) -> str:
        return link(tab.job.name, build.id)

    common = {"report": report, "tab": tab, "root": "../../"}
    data = grid_data(tab.job, build_href, grid_columns)
    rows = data["rows"]
    assert isinstance(rows, GridRows)
    _write(
        env,
        "grid.html.j2",
        page_dir / "grid.html",
        data=data,
        data_json=grid_json(data),
        chart=trend_chart(tab.trend),
        filters=rows.filters(),
        column_choices=sorted({*COLUMN_CHOICES, grid_columns} - {0}),
        class_icons=list(CLASS_ICONS.items()),
        **common,
    )


def _write_tab(env: jinja2.Environment, report: Report, tab: TabReport, page_dir: Path, build_url: str) -> None:
    """The tab's pages but its grid."""
    link = _build_links([tab], page_dir, build_url)
    common = {"report": report, "tab": tab, "root": "../../"}
    _write(env, "flaky.html.j2", page_dir / "flaky.html", ignore_in_a_row=IGNORE_FAILURES_IN_A_ROW, **common)
    _write(env, "categories.html.j2", page_dir / "categories.html", categories=categories(tab.job, listed=LISTED_CASES),
           case_rows=case_rows, history=HISTORY, listed_cases=LISTED_CASES,
           statuses=(Status.PASS, Status.FAIL, Status.FLAKY, Status.SKIP),
           **common)
    _write(env, "diff.html.j2", page_dir / "diff.html", **common)
    _write(env, "failures.html.j2", page_dir / FAILURES_PAGE,
           **page_context(tab.clusters, link, across_jobs=False), **common)


def _job_href(job: Job, page_dir: Path) -> str:
    """The job's web address (a remote root's), else its directory as a page in `page_dir` links it."""
    return job.url or quote(Path(os.path.relpath(job.path.resolve(), page_dir.resolve())).as_posix())


def _build_links(tabs: Iterable[TabReport], page_dir: Path, build_url: str) -> Callable[[str, str], str]:
    """(job name, build id) -> the build's address as a page in `page_dir` links it: `build_url`'s template when
    given (every page alike, wherever the results were read from), else the build's directory."""
    job_hrefs = {tab.job.name: _job_href(tab.job, page_dir) for tab in tabs}
    links: dict[tuple[str, str], str] = {}  # a page links a build from many places

    def link(job: str, build: str) -> str:
        found = links.get((job, build))
        if found is None:
            found = links[job, build] = (
                build_url.replace(JOB_TOKEN, quote(job)).replace(BUILD_TOKEN, quote(build)) if build_url
                else f"{job_hrefs[job]}/{quote(build)}")
        return found

    return link


def write_compare(comparison: Comparison, output: Path, *, generated: float, dashboard: bool) -> Path:
    """The comparison's page, `compare.html` under `output` (beside the dashboard's pages when `dashboard`)."""
    output.mkdir(parents=True, exist_ok=True)
    page = output / COMPARE_PAGE
    _write(environment(), "compare.html.j2", page, comparison=comparison, generated=generated, dashboard=dashboard,
           verdicts=list(Verdict), words=STATUS_WORDS)
    return page


def _sparkline(tab: TabReport) -> Markup:
    return trend_chart(tab.trend[-SPARKLINE_BUILDS:], width=160, height=30, compact=True)


def _write(env: jinja2.Environment, template: str, path: Path, **context: object) -> None:
    """A page written piece by piece as the template makes them: a big tab's grid is megabytes of plain-ASCII JSON,
    encoded as such, not first joined with the page's other text into one wider string."""
    with path.open("w", encoding="utf-8") as page:
        page.writelines(env.get_template(template).generate(**context))
