"""The dashboard of a results root: stored builds read by the reports package, with the KEP plan's items."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path

from winsuite import paths
from winsuite.errors import UsageError
from winsuite.errors import one_line
from winsuite.given_paths import Found
from winsuite.given_paths import probe
from winsuite.given_paths import shown
from winsuite.given_paths import unreadable
from winsuite.policy.plan import load_plan
from winsuite.run.results_roots import ResultsRoot
from winsuite_reports.analysis import Report
from winsuite_reports.analysis import ReportOptions
from winsuite_reports.analysis import build_report
from winsuite_reports.compare import Comparison
from winsuite_reports.compare import compare
from winsuite_reports.job import History
from winsuite_reports.job import Job
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
    history = history_of([ResultsRoot(str(root), root)], max_builds=max_builds, skip=skip)
    if not history.jobs:
        raise UsageError(f"--results {root}: {NO_BUILDS}")
    return analysed(history, options)


def history_of(roots: Sequence[ResultsRoot], *, max_builds: int = 0, since: float | None = None,
               skip: Path | None = None) -> History:
    """The jobs of every root (a root whose store failed holds none); a job name in two roots is a usage error."""
    jobs: list[Job] = []
    where: dict[str, str] = {}
    for root in roots:
        if root.path is None:
            continue
        for job in _load(root, root.path, max_builds=max_builds, since=since, skip=skip).jobs:
            if job.name in where:
                raise UsageError(f"--results {root.location}: job {job.name} is also under {where[job.name]}; "
                                 "give each job once")
            where[job.name] = root.location
            job.url = root.job_url(job.name) if root.job_url is not None else ""
            jobs.append(job)
    for job in jobs:  # shown as TestGrid shows them (an E column); said here so nobody misses one
        for build in job.builds:
            if build.overall.message.startswith(MALFORMED):
                place = f"{job.url}/{build.id}" if job.url else str(job.path / build.id)
                print(f"winsuite report: warning: {place}: {one_line(build.overall.message)}", file=sys.stderr)
    return History(next((root.path for root in roots if root.path is not None), Path()), jobs)


def compared(sides: Sequence[ResultsRoot]) -> Comparison | None:
    """`--compare A B`: the newest build of each side compared; None when a side's store failed (said already)."""
    jobs = []
    for side in sides:
        if side.path is None:
            return None
        history = history_of([side], max_builds=1)
        if len(history.jobs) != 1:
            raise UsageError(f"--compare {side.location}: holds {len(history.jobs)} jobs; name one build (or job)")
        jobs.append((side.location, history.jobs[0]))
    return compare(jobs[0], jobs[1], plan_items())


def analysed(history: History, options: ReportOptions) -> Report:
    try:
        return build_report(history, options, now=time.time(), plan_items=plan_items())
    except ReportError as err:
        raise UsageError(str(err)) from err


def _load(root: ResultsRoot, path: Path, *, max_builds: int, since: float | None, skip: Path | None) -> History:
    if probe(path, "results root (--results)") is not Found.DIRECTORY:
        raise UsageError(f"--results {shown(root.location)}: no such directory (expected "
                         "ROOT/<job>/<build>/started.json)")
    try:
        history = load_history(path, max_builds=max_builds, since=since, skip=skip)
    except OSError as err:  # a job or build directory this user may not read
        raise unreadable("results", err.filename or path, err) from None
    if not history.jobs and not root.failures:
        raise UsageError(f"--results {root.location}: {NO_BUILDS}")
    return history


def write(report: Report, output: Path, *, grid_columns: int = DEFAULT_GRID_COLUMNS, build_url: str = "",
          compared: bool = False) -> str:
    """Write the HTML dashboard (linking the comparison page when `compared`); one line saying what it holds and
    where."""
    try:
        index = write_dashboard(report, output, grid_columns=grid_columns, build_url=build_url, compared=compared)
    except OSError as err:
        raise UsageError(f"--output {output}: cannot write the dashboard: {err.strerror or err}") from err
    verdict = "READY" if report.readiness.ready else "NOT READY"
    tabs = f"{len(report.tabs)} tab{'' if len(report.tabs) == 1 else 's'}"
    return f"winsuite report: {tabs}, release verdict {verdict}: {index}"


def output_of(job_dir: Path) -> Path:
    """Where the dashboard of a run's results root goes: `_dashboard` in a root the user gave (--results-root R
    keeps everything of the run under R), beside the default root (`_artifacts`, `_dashboard`) as it always was."""
    root = job_dir.parent
    default = root.resolve() == Path(paths.RESULTS_ROOT).resolve()
    return (root.parent if default else root) / paths.DASHBOARD_DIR


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
