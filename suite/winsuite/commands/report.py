"""`winsuite report`: the TestGrid-style dashboard, a markdown summary or the figures as JSON, from a results root."""

from __future__ import annotations

import argparse
import datetime
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING
from typing import TypeVar

from winsuite.commands._types import Subparsers
from winsuite.errors import UsageError
from winsuite_reports.render import DEFAULT_GRID_COLUMNS

if TYPE_CHECKING:  # the reports package (jinja2 …) is imported only when a report is made
    from winsuite_reports.analysis import ReportOptions

N = TypeVar("N", int, float)


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write a TestGrid-style dashboard (or a markdown summary, or JSON) from stored results",
        description="Read ROOT/<job>/<build>/ (what `winsuite run` writes, or upstream e2e artifacts) and "
        "write a static dashboard: tab statuses, grids, flakiness, run diffs, the KEP-116 release verdict.",
    )
    parser.add_argument(
        "--results", action="append", default=[], metavar="ROOT",
        help="results in the prow layout (repeatable): a directory, gs://BUCKET/PREFIX or s3://BUCKET/PREFIX; a root "
             "of jobs, one job or one build",
    )
    parser.add_argument("--output", type=Path, metavar="DIR", help="where index.html and its pages go (html)")
    parser.add_argument(
        "--format",
        choices=("html", "markdown", "json"),
        default="html",
        help="markdown prints a summary; json prints each tab's TestGrid figures",
    )
    tab = parser.add_argument_group("tab status (TestGrid options)")
    tab.add_argument("--columns-recent", default="10", metavar="N", help="recent columns a status reads (10)")
    tab.add_argument(
        "--failures-to-alert", default="3", metavar="N", help="consecutive failures that alert (3)"
    )
    tab.add_argument(
        "--passes-to-disable-alert", default="1", metavar="N", help="passes that close an alert (1)"
    )
    tab.add_argument(
        "--stale-hours", default="0", metavar="H", help="STALE when the newest run is older (0 = off)"
    )
    tab.add_argument(
        "--broken-threshold",
        default="0",
        metavar="F",
        help="BROKEN when a recent column fails more (0-1; 0 = off)",
    )
    tab.add_argument("--flake-days", default="7", metavar="D", help="days of flakiness analysis (7)")
    release = parser.add_argument_group("release readiness")
    release.add_argument(
        "--readiness-runs", default="10", metavar="N", help="last N runs the KEP criterion reads (10)"
    )
    release.add_argument(
        "--blocking",
        action="append",
        default=[],
        metavar="JOB",
        help="judge JOB as release-blocking (repeatable)",
    )
    view = parser.add_argument_group("views")
    view.add_argument(
        "--diff",
        nargs=3,
        action="append",
        default=[],
        metavar=("JOB", "OLD", "NEW"),
        help="also compare two builds",
    )
    view.add_argument(
        "--max-builds", default="0", metavar="N", help="read only the newest N builds per job (0 = all)"
    )
    view.add_argument("--since", metavar="WHEN",
                      help="read only builds started since WHEN: a date (2026-11-01, UTC), or a duration ago (7d, 36h)")
    view.add_argument("--compare", nargs=2, metavar=("A", "B"),
                      help="compare two builds spec by spec (each a build directory or a gs:// or s3:// build, or "
                           "a job: its newest build)")
    view.add_argument("--build-url", default="", metavar="TEMPLATE",
                      help="where build links point, with <job> and <build> (e.g. https://gcsweb.k8s.io/gcs/"
                           "kubernetes-ci-logs/logs/<job>/<build>); default: the build's own directory or bucket URL")
    view.add_argument(
        "--grid-columns",
        default=str(DEFAULT_GRID_COLUMNS),
        metavar="N",
        help="builds the grid draws at first",
    )
    parser.set_defaults(handler=_report)


def _report(args: argparse.Namespace) -> int:
    from winsuite.run import dashboard
    from winsuite.run import results_roots
    from winsuite_reports.markdown import compare_markdown
    from winsuite_reports.markdown import markdown_summary
    from winsuite_reports.render import write_compare
    from winsuite_reports.summary_json import json_summary

    if not args.results and not args.compare:
        raise UsageError("--results ROOT or --compare A B is required")
    if args.format == "html" and args.output is None:
        raise UsageError("--output DIR is required for the HTML dashboard (or use --format markdown or json)")
    max_builds, since = _number(args, "max_builds", int, 0), _since(args.since)
    output = Path(args.output) if args.output is not None else None
    roots = [results_roots.resolve(location, max_builds=max_builds, since=since) for location in args.results]
    sides = [results_roots.resolve(reference, max_builds=1, since=None) for reference in args.compare or ()]
    failures = [failure for root in [*roots, *sides] for failure in root.failures]
    report = None
    if roots:
        history = dashboard.history_of(roots, max_builds=max_builds, since=since, skip=output)
        report = dashboard.analysed(history, _options(args)) if history.jobs else None
    comparison = dashboard.compared(sides) if sides else None
    if args.format == "markdown":
        parts = ([markdown_summary(report)] if report else []) + ([compare_markdown(comparison)] if comparison else [])
        sys.stdout.write("\n".join(parts))
    elif args.format == "json":
        if report is not None:
            sys.stdout.write(json_summary(report))
    elif output is not None:
        if report is not None:
            print(dashboard.write(report, output, grid_columns=_number(args, "grid_columns", int, 0),
                                  build_url=args.build_url, compared=comparison is not None))
        if comparison is not None:
            page = write_compare(comparison, output, generated=time.time(), dashboard=report is not None)
            print(f"winsuite report: {comparison.a.label} compared with {comparison.b.label}: {page}")
    return int(results_roots.exit_code(failures))


def _since(text: str | None) -> float | None:
    """--since as epoch seconds: a date or date and time (UTC), or a duration before now."""
    if text is None:
        return None
    if re.fullmatch(r"\d+(\.\d+)?[smhd]", text.strip()):
        value, unit = float(text.strip()[:-1]), text.strip()[-1]
        return time.time() - value * {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit]
    try:
        moment = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"--since {text}: not a date (2026-11-01, 2026-11-01T12:00) or a duration (7d, 36h)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp()


def _options(args: argparse.Namespace) -> ReportOptions:
    from winsuite_reports.analysis import ReportOptions
    from winsuite_reports.release_jobs import Criteria
    from winsuite_reports.status import Thresholds

    return ReportOptions(
        thresholds=Thresholds(
            num_columns_recent=_number(args, "columns_recent", int, 1),
            num_failures_to_alert=_number(args, "failures_to_alert", int, 0),
            num_passes_to_disable_alert=_number(args, "passes_to_disable_alert", int, 1),
            stale_hours=_number(args, "stale_hours", float, 0),
            broken_column_threshold=_number(args, "broken_threshold", float, 0, 1),
        ),
        criteria=Criteria(runs=_number(args, "readiness_runs", int, 1)),
        flake_days=_number(args, "flake_days", float, 0),
        blocking=tuple(args.blocking),
        diffs=tuple((job, old, new) for job, old, new in args.diff),
    )


def _number(args: argparse.Namespace, dest: str, kind: type[N], minimum: N, maximum: N | None = None) -> N:
    raw = getattr(args, dest)
    flag = "--" + dest.replace("_", "-")
    try:
        value = kind(raw)
    except ValueError:
        raise UsageError(f"{flag} {raw}: not a{'n integer' if kind is int else ' number'}") from None
    if value < minimum or (maximum is not None and value > maximum):
        bounds = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
        raise UsageError(f"{flag} {raw}: must be {bounds}")
    return value
