"""`winsuite prepull`: pull a job's images on the nodes that will run its tests, before any test runs."""

from __future__ import annotations

import argparse
import signal

from winsuite.commands._types import Subparsers
from winsuite.inputs.jobs import parse_duration
from winsuite.policy import options


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "prepull", help="pull the images of a job's selection on its nodes (one DaemonSet per OS and Windows build)",
        description="Every image the selected tests use is pulled on every node their pods may land on; the "
        "DaemonSets go away afterwards. Exit code 1 names each node and image that failed to pull.")
    options.add_to_argparse(parser, options.SELECTION_OPTIONS + options.CLUSTER_OPTIONS)
    parser.add_argument("--timeout", type=parse_duration, default=None, metavar="DURATION",
                        help="how long the pulls may take, e.g. 20m (default: 20m)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from winsuite.errors import ExitCode
    from winsuite.policy.catalog import collect
    from winsuite.policy.prepull_list import to_prepull
    from winsuite.policy.run_config import resolve_run
    from winsuite.results.model import Outcome
    from winsuite.run import prepull
    from winsuite.run.console import Console
    from winsuite.run.session import open_session

    # SIGTERM (a CI job cancelled) stops the pulls like SIGINT does: the DaemonSets are still removed.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    get = vars(args).get
    config = resolve_run(options.job_ref(get),
                         options.overrides(get, options.SELECTION_OPTIONS + options.CLUSTER_OPTIONS))
    session = open_session(config, Console())
    images = to_prepull(session.run, collect(), session.facts)
    pulls = prepull.pull_sets(session.run.target_os, images)
    print(f"prepull: {len(images)} image reference(s) in {len(pulls)} DaemonSet(s) on {session.connection.server}")
    placement = session.run.placement.avoiding(session.facts.simulated_nodes())  # a pull there would "succeed"
    rows = prepull.prepull(session.connection.api, pulls, placement, session.run.run_id,
                           timeout=args.timeout or prepull.TIMEOUT, report=print)
    for row in rows:
        print(f"{row.name}: {row.outcome.value}" + "".join(f"\n  {line}" for line in row.details.splitlines()))
    return int(ExitCode.TESTS_FAILED if any(r.outcome is Outcome.FAILED for r in rows) else ExitCode.OK)
