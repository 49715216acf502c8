"""The dashboard of a results root: stored builds read by the reports package, with the KEP plan's items."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from winsuite.errors import UsageError
from winsuite.errors import one_line
from winsuite.given_paths import Found
from winsuite.given_paths import probe
from winsuite.given_paths import shown
from winsuite.given_paths import unreadable
from winsuite.policy.plan import load_plan
from winsuite_reports.analysis import Report
from winsuite_reports.analysis import ReportOptions
from winsuite_reports.analysis import build_report
from winsuite_reports.model import PlanItem
from winsuite_reports.model import ReportError
from winsuite_reports.prow import MALFORMED
from winsuite_reports.render import DEFAULT_GRID_COLUMNS
from winsuite_reports.render import write_dashboard
from winsuite_reports.results import load_history

NO_BUILDS = "no builds found (expected ROOT/<job>/<build>/started.json)"


def plan_items() -> list[PlanItem]:
    """The KEP plan as plain data for the per-item table (the reports never import winsuite)."""
    return [PlanItem(item.id, item.tier, item.title, list(item.tests)) for item in load_plan().items]


def report_of(root: Path, options: ReportOptions, *, max_builds: int = 0, skip: Path | None = None) -> Report:
    """Every stored build under `root` analysed; `skip` is a directory under root not to read (the output)."""
    if probe(root, "results root (--results)") is not Found.DIRECTORY:
        raise UsageError(f"--results {shown(root)}: no such directory (expected ROOT/<job>/<build>/started.json)")
    try:
        history = load_history(root, max_builds=max_builds, skip=skip)
    except OSError as err:  # a job or build directory this user may not read
        raise unreadable("results", err.filename or root, err) from None
    if not history.jobs:
        raise UsageError(f"--results {root}: {NO_BUILDS}")
    for job in history.jobs:  # shown as TestGrid shows them (an E column); said here so nobody misses one
        for build in job.builds:
            if build.overall.message.startswith(MALFORMED):
                print(f"winsuite report: warning: {job.path / build.id}: {one_line(build.overall.message)}",
                      file=sys.stderr)
    try:
        return build_report(history, options, now=time.time(), plan_items=plan_items())
    except ReportError as err:
        raise UsageError(str(err)) from err


def write(report: Report, output: Path, *, grid_columns: int = DEFAULT_GRID_COLUMNS) -> str:
    """Write the HTML dashboard; one line saying what it holds and where."""
    try:
        index = write_dashboard(report, output, grid_columns=grid_columns)
    except OSError as err:
        raise UsageError(f"--output {output}: cannot write the dashboard: {err.strerror or err}") from err
    verdict = "READY" if report.readiness.ready else "NOT READY"
    tabs = f"{len(report.tabs)} tab{'' if len(report.tabs) == 1 else 's'}"
    return f"winsuite report: {tabs}, release verdict {verdict}: {index}"


def output_of(job_dir: Path) -> Path:
    """Where the dashboard of a run's results root goes: `_dashboard` beside the root."""
    return job_dir.parent.parent / "_dashboard"


def for_run(job_dir: Path, say: Callable[[str, bool], None]) -> str:
    """The dashboard of the results root a run's build sits in (`say(line, is_warning)` tells how it went); what the
    run's summary says of it."""
    root, output = job_dir.parent, output_of(job_dir)
    command = f"winsuite report --results {root} --output {output}"
    try:
        say(write(report_of(root, ReportOptions(), skip=output), output), False)
    except UsageError as err:
        say(f"winsuite: warning: no dashboard: {one_line(str(err))}", True)
        return command
    return f"{output / 'index.html'}  (regenerate: {command})"
