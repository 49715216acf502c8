"""`winsuite run`: run a job (default: the embedded cluster's) and write its results in the prow layout."""

from __future__ import annotations

import argparse

from winsuite.commands._types import Subparsers
from winsuite.inputs.jobs import parse_duration
from winsuite.inputs.run_modes import NodeLogMode
from winsuite.paths import CASES_PACKAGE
from winsuite.paths import DASHBOARD_DIR
from winsuite.paths import RESULTS_ROOT
from winsuite.policy import options


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run a job and write prow-style artifacts (default: the embedded cluster)",
        description="Phase 1 runs the parallel-safe tests with pytest-xdist, phase 2 the [Serial]/[Disruptive] "
        "tests alone; results are merged into one build in the prow layout.",
    )
    options.add_to_argparse(parser, options.RUN_OPTIONS)
    parser.add_argument("-n", "--parallelism", type=int, metavar="N",
                        help="parallel workers of phase 1 (job field parallelism; env WINSUITE_PARALLELISM)")
    parser.add_argument("--run-timeout", type=parse_duration, metavar="DURATION",
                        help="whole-run timeout, e.g. 90m (job timeouts.run)")
    parser.add_argument("--artifacts", metavar="DIR",
                        help="results directory of this build (default: _artifacts/<job>/<build>; env ARTIFACTS)")
    parser.add_argument("--results-root", metavar="DIR", default=RESULTS_ROOT,
                        help=f"root of the prow layout when --artifacts is not given, with the dashboard in "
                             f"DIR/{DASHBOARD_DIR} (default: {RESULTS_ROOT}, the dashboard beside it)")
    parser.add_argument("--build-id", help="build id (default: the start time, YYYYMMDDHHMMSS)")
    parser.add_argument("--collect-node-logs", choices=tuple(NodeLogMode), default=None,
                        help="collect each node's kubelet, container runtime and kube-proxy logs of the run's time "
                             "window into artifacts/nodes/<node>/ (default: on-failure)")
    parser.add_argument("--ops-readiness", metavar="DIR_OR_FILE", nargs="+",
                        help="run what these windows-operational-readiness specifications select "
                             "(specifications/*/spec.yaml), rows labelled with their category and test case")
    parser.add_argument("--category", action="append", default=[],
                        help="with --ops-readiness: only the test cases of this category (repeatable)")
    parser.add_argument("--rerun-failed", metavar="BUILD_DIR_OR_ID",
                        help="run the failed, flaky and interrupted tests of a stored build again, as a new build of "
                             "the same job with the same settings (a build directory, or a build id under the "
                             "results root)")
    parser.add_argument("--shard", metavar="I/N",
                        help="run only the I-th of N shards of the selection (even expected durations, serial tests "
                             "together), e.g. for a CI matrix; `winsuite merge` makes the shard builds one build")
    parser.add_argument("--shard-plan", metavar="FILE",
                        help="with --shard: the plan every shard follows, from `winsuite list --shards N --format "
                             "json` (cut by this machine's record of durations; without it, shards are cut by the "
                             "tests' declared slowness, which every machine agrees on)")
    parser.add_argument("--in-cluster", action="store_true",
                        help="run inside the target cluster: the shards as the pods of an Indexed Job (in a namespace "
                             "of the run's own, with a service account bound for the run), followed from here and "
                             "merged into one build; everything of the run is deleted at its end")
    parser.add_argument("--shards", type=int, metavar="N",
                        help="with --in-cluster: the number of shard pods (default 1)")
    parser.add_argument("--image", metavar="REF",
                        help="with --in-cluster: winsuite's image the pods run (default on the embedded cluster: one "
                             "made here, `winsuite image build`)")
    parser.add_argument("--detach", action="store_true",
                        help="with --in-cluster: start the run and return; `winsuite attach BUILD` follows it later")
    parser.add_argument("--run-id", help="the run's id, which labels its namespaces (default: new)")
    parser.add_argument("--publish", metavar="DEST",
                        help="at the end of the run (also after an interrupt), publish its build to DEST: "
                             "gs://BUCKET/PREFIX, s3://BUCKET/PREFIX or a directory (see `winsuite publish`)")
    parser.add_argument("--cases", metavar="PACKAGE", default=CASES_PACKAGE,
                        help="Python package of winsuite tests to run (default: winsuite.cases, the catalog)")
    parser.add_argument("pytest_args", nargs="*", metavar="-- PYTEST_ARGS",
                        help="extra arguments passed to pytest, after --")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from winsuite.errors import ExitCode
    from winsuite.errors import UsageError
    from winsuite.policy.ops_readiness import load_specifications
    from winsuite.run.ops_run import OpsRun
    from winsuite.run.request import resolve_request
    from winsuite.run.rerun import load_rerun
    from winsuite.run.runner import Runner

    if args.category and not args.ops_readiness:
        raise UsageError("--category needs --ops-readiness")
    if args.shard_plan and not args.shard:
        raise UsageError("--shard-plan needs --shard I/N")
    if args.shard and (args.ops_readiness or args.rerun_failed):
        raise UsageError("--shard cuts the job's selection: it does not combine with --ops-readiness or --rerun-failed")
    if args.ops_readiness and args.winsuite_focus:
        raise UsageError("--ops-readiness selects the tests by its test cases; leave out --focus")
    in_cluster_only = [flag for flag, value in (("--shards", args.shards), ("--image", args.image),
                                                ("--detach", args.detach)) if value]
    if in_cluster_only and not args.in_cluster:
        raise UsageError(f"{in_cluster_only[0]} needs --in-cluster")
    if args.publish and args.in_cluster:
        raise UsageError("--publish with --in-cluster: publish the merged build with `winsuite publish BUILD DEST`")
    if args.in_cluster:
        if args.shards is not None and not 1 <= args.shards <= 100:
            raise UsageError(f"--shards {args.shards}: expected 1 to 100 shard pods")
        if args.shard or args.ops_readiness or args.rerun_failed:
            raise UsageError("--in-cluster plans its own shards: leave out --shard, --ops-readiness, --rerun-failed")
        from winsuite.run.incluster.start import start

        return start(resolve_request(args), image=args.image, shards=args.shards, detach=args.detach)
    ops = OpsRun(load_specifications(args.ops_readiness, args.category)) if args.ops_readiness else None
    rerun = load_rerun(args.rerun_failed, Path(args.results_root)) if args.rerun_failed else None
    if rerun is not None and not rerun.names:
        print(f"winsuite: build {rerun.build_dir} has no failed, flaky or interrupted test: nothing to rerun")
        return int(ExitCode.OK)
    if rerun is not None:
        print(f"winsuite: rerunning {len(rerun.names)} test(s) of build {rerun.build_dir}")
    runner = Runner(resolve_request(args, rerun), ops)
    code = int(runner.run_build())
    if args.publish:
        from winsuite.run.publish_step import after_run

        code = after_run(runner.output.build_dir, args.publish, code)
    return code
