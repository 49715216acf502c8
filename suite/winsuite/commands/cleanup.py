"""`winsuite cleanup`: delete what interrupted runs left behind: namespaces labelled with a run id, and outside them
their Leases, placement policies and LoadBalancer probes (run/cleanup.py)."""

from __future__ import annotations

import argparse
import os

from winsuite.commands._types import Subparsers
from winsuite.policy import options


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser("cleanup", help="delete what interrupted runs left in the cluster")
    options.add_to_argparse(parser, options.CLUSTER_OPTIONS)
    parser.add_argument("--run-id", help="only this run's objects, whether its Lease runs or not (default: every "
                        "winsuite run's whose Lease ran out)")
    parser.add_argument("--dry-run", action="store_true", help="list what would be deleted")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from winsuite.cluster.connect import connect
    from winsuite.inputs.jobs import resolve_job
    from winsuite.k8s import run_leases
    from winsuite.k8s.namespaces import delete_run_namespaces
    from winsuite.run.cleanup import remove_left
    from winsuite.run.incluster.objects import delete_run_bindings
    from winsuite.run.incluster.objects import shard_runs_of

    get = vars(args).get
    job = resolve_job(options.job_ref(get), os.environ, options.overrides(get, options.CLUSTER_OPTIONS))
    cluster = connect(job.cluster, start_embedded=False)
    active = frozenset() if args.run_id else frozenset(run_leases.active_runs(cluster.api))
    for run_id in sorted(active):
        print(f"left alone: run {run_id}, which is active (its Lease default/winsuite-run-{run_id} has not run out)")
    deleted = delete_run_namespaces(cluster.api, run_id=args.run_id, dry_run=args.dry_run, spare_runs=active)
    shard_runs = shard_runs_of(cluster.api, args.run_id) if args.run_id else []  # a run inside the cluster's
    for shard_run in shard_runs:
        deleted += delete_run_namespaces(cluster.api, run_id=shard_run, dry_run=args.dry_run)
    verb = "would delete" if args.dry_run else "deleted"
    for name in deleted:
        print(f"{verb} namespace {name}")
    named = {args.run_id, *shard_runs} if args.run_id else None
    for what in remove_left(cluster.api, run_ids=named, spare_runs=active, dry_run=args.dry_run):
        print(f"{verb} {what}")
    for name in delete_run_bindings(cluster.api, run_id=args.run_id, dry_run=args.dry_run, spare_runs=active):
        print(f"{verb} clusterrolebinding {name} (of a run inside the cluster)")
    print(f"{len(deleted)} namespace(s) {verb.rsplit(maxsplit=1)[-1]}")
    return 0
