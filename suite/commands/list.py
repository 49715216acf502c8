"""`winsuite list`: what a run would select and why every other test is out; or ginkgo selection over a names file."""

from __future__ import annotations

import argparse
from typing import Any

from winsuite.commands._output import print_json
from winsuite.commands._output import warn
from winsuite.commands._types import Subparsers
from winsuite.policy import options
from winsuite.policy.selection import Outcome
from winsuite.policy.selection import Selector
from winsuite.policy.upstream_names import read_names_file

FORMATS = ("table", "names", "json")


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "list",
        help="list the tests a run would select, and why the others are out",
        description="Without --names: the catalog under the job's policy. With --names FILE: ginkgo's "
        "focus/skip over upstream full names (e2e.test --list-tests output), nothing else applied.",
    )
    options.add_to_argparse(parser, options.SELECTION_OPTIONS)
    parser.add_argument("--names", metavar="FILE", help="apply --focus/--skip to these upstream names")
    parser.add_argument("--format", choices=FORMATS, default="table")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    get = vars(args).get
    if args.names:
        return _list_names(args)
    from winsuite.policy.catalog import collect
    from winsuite.policy.run_config import build_run_config

    config = build_run_config(options.job_ref(get), options.overrides(get, options.SELECTION_OPTIONS))
    for message in config.repo_list.warnings:
        warn(message)
    rows: list[dict[str, Any]] = []
    for entry in collect():
        spec = entry.spec
        verdict = config.policy.decide(spec.full_name, spec.tags)
        status = {Outcome.RUN: "run", Outcome.SKIP: "skip", Outcome.DESELECT: "out"}[verdict.outcome]
        rows.append({"status": status, "name": spec.full_name, "reason": verdict.reason,
                     "needs": [n.name for n in spec.needs], "location": spec.location})
    if args.format == "json":
        print_json({"job": config.job.name, "targetOS": config.target_os, "tests": rows})
    elif args.format == "names":
        print("\n".join(r["name"] for r in rows if r["status"] == "run"))
    else:
        print(f"job {config.job.name} ({config.job.source}), target OS {config.target_os}")
        for r in rows:
            print(f"{r['status']:<4}  {r['name']}")
            if r["reason"]:
                print(f"      {r['reason']}")
        counts = {s: sum(r["status"] == s for r in rows) for s in ("run", "skip", "out")}
        print(f"{counts['run']} to run, {counts['skip']} skipped with a reason, {counts['out']} not selected")
    return 0


def _list_names(args: argparse.Namespace) -> int:
    """Exactly ginkgo's selection, in input order; e2e.test's default skip applies only with no focus/skip."""
    selector = Selector(tuple(args.winsuite_focus or ()), tuple(args.winsuite_skip or ()))
    names = read_names_file(args.names)
    selected = selector.filter(names)
    if args.format == "names":
        if selected:
            print("\n".join(selected))
    elif args.format == "json":
        print_json({"selected": selected, "total": len(names)})
    else:
        for name in names:
            why = selector.why_not(name)
            print(f"{'run' if why is None else 'out'}  {name}" + (f"  ({why})" if why else ""))
        print(f"{len(selected)} of {len(names)} selected")
    return 0
