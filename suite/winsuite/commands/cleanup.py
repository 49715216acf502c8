"""`winsuite cleanup`: delete what interrupted runs left behind (namespaces labelled with a run id)."""

from __future__ import annotations

import argparse
import os

from winsuite.commands._types import Subparsers
from winsuite.policy import options


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser("cleanup", help="delete namespaces left by interrupted runs")
    options.add_to_argparse(parser, options.CLUSTER_OPTIONS)
    parser.add_argument("--run-id", help="only this run's namespaces (default: every winsuite run's)")
    parser.add_argument("--dry-run", action="store_true", help="list what would be deleted")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from winsuite.cluster.connect import connect
    from winsuite.inputs.jobs import resolve_job
    from winsuite.k8s import run_leases
    from winsuite.k8s.namespaces import delete_run_namespaces
    from winsuite.run.incluster.objects import delete_run_bindings
    from winsuite.run.incluster.objects import shard_runs_of

    get = vars(args).get
    job = resolve_job(options.job_ref(get), os.environ, options.overrides(get, options.CLUSTER_OPTIONS))
    cluster = connect(job.cluster, start_embedded=False)
    active = frozenset() if args.run_id else frozenset(run_leases.active_runs(cluster.api))
    for run_id in sorted(active):
        print(f"left alone: namespaces of run {run_id}, which is active (its Lease default/winsuite-run-{run_id})")
    deleted = delete_run_namespaces(cluster.api, run_id=args.run_id, dry_run=args.dry_run, spare_runs=active)
    for shard_run in shard_runs_of(cluster.api, args.run_id) if args.run_id else []:  # a run inside the cluster's
        deleted += delete_run_namespaces(cluster.api, run_id=shard_run, dry_run=args.dry_run)
    verb = "would delete" if args.dry_run else "deleted"
    for name in deleted:
        print(f"{verb} namespace {name}")
    for name in delete_run_bindings(cluster.api, run_id=args.run_id, dry_run=args.dry_run, spare_runs=active):
        print(f"{verb} clusterrolebinding {name} (of a run inside the cluster)")
    print(f"{len(deleted)} namespace(s) {verb.rsplit(maxsplit=1)[-1]}")
    return 0
