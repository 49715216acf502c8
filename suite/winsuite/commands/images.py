"""`winsuite images`: the image references a job's selected tests resolve to (its prepull list)."""

from __future__ import annotations

import argparse

from winsuite.commands import _cluster
from winsuite.commands._output import print_json
from winsuite.commands._output import print_table
from winsuite.commands._output import warn
from winsuite.commands._types import Subparsers
from winsuite.policy import options


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser("images", help="print the resolved image (prepull) list of a job")
    options.add_to_argparse(parser, options.SELECTION_OPTIONS + options.ASKED_CLUSTER_OPTIONS)
    parser.add_argument("--windows-build", action="append", metavar="BUILD",
                        help="Windows build to resolve for, e.g. 10.0.20348 (repeatable; default: the Windows builds "
                        "of the cluster's nodes with --kubeconfig, else every build the catalog knows)")
    parser.add_argument("--format", choices=("table", "refs", "json"), default="table")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from winsuite.policy.catalog import collect
    from winsuite.policy.prepull_list import resolve_all
    from winsuite.policy.prepull_list import used_images
    from winsuite.policy.run_config import resolve_run

    get = vars(args).get
    config = resolve_run(options.job_ref(get),
                         options.overrides(get, options.SELECTION_OPTIONS + options.ASKED_CLUSTER_OPTIONS))
    for message in config.repo_list.warnings:
        warn(message)
    if _cluster.asked(args):
        config = _cluster.discovered(config)
    facts = config.facts
    # A cluster asked: the images of the tests it can run, for the Windows builds of its nodes.
    builds = args.windows_build or (facts.windows_builds() if facts is not None else None)
    rows = [{"build": r.build or config.target_os, "image": r.image_id, "reference": r.reference, "note": r.note}
            for r in resolve_all(config, used_images(config, collect(), facts), builds)]
    if args.format == "json":
        cluster = {"server": facts.server, "version": facts.server_version} if facts is not None else None
        print_json({"job": config.job.name, "why": config.job.why, "targetOS": config.target_os,
                    "cluster": cluster, "images": rows})
    elif args.format == "refs":
        print("\n".join(sorted({r["reference"] for r in rows if r["reference"]})))
    else:
        print(f"job {config.job.name} ({config.job.why}), target OS {config.target_os}, "
              f"repo list {config.repo_list.source}")
        if facts is not None:
            print(_cluster.described(facts))
        print_table(["BUILD", "IMAGE", "REFERENCE"],
                    [[r["build"], r["image"], r["reference"] or f"(unavailable: {r['note']})"] for r in rows])
    return 0
