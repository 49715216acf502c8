"""`winsuite images`: the image references a job's selected tests resolve to (its prepull list)."""

from __future__ import annotations

import argparse

from winsuite.commands._output import print_json
from winsuite.commands._output import print_table
from winsuite.commands._output import warn
from winsuite.commands._types import Subparsers
from winsuite.policy import options


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser("images", help="print the resolved image (prepull) list of a job")
    options.add_to_argparse(parser, options.SELECTION_OPTIONS)
    parser.add_argument("--windows-build", action="append", metavar="BUILD",
                        help="Windows build to resolve for, e.g. 10.0.20348 (repeatable; default: every build "
                        "the catalog knows)")
    parser.add_argument("--format", choices=("table", "refs", "json"), default="table")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from winsuite.policy.catalog import collect
    from winsuite.policy.prepull_list import resolve_all
    from winsuite.policy.prepull_list import used_images
    from winsuite.policy.run_config import resolve_run

    get = vars(args).get
    config = resolve_run(options.job_ref(get), options.overrides(get, options.SELECTION_OPTIONS))
    for message in config.repo_list.warnings:
        warn(message)
    rows = [{"build": r.build or config.target_os, "image": r.image_id, "reference": r.reference, "note": r.note}
            for r in resolve_all(config, used_images(config, collect()), args.windows_build)]
    if args.format == "json":
        print_json({"job": config.job.name, "targetOS": config.target_os, "images": rows})
    elif args.format == "refs":
        print("\n".join(sorted({r["reference"] for r in rows if r["reference"]})))
    else:
        print(f"job {config.job.name}, target OS {config.target_os}, repo list {config.repo_list.source}")
        print_table(["BUILD", "IMAGE", "REFERENCE"],
                    [[r["build"], r["image"], r["reference"] or f"(unavailable: {r['note']})"] for r in rows])
    return 0
