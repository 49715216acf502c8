"""`winsuite exclusions lint`: expired entries, invalid regexes and entries that match no known test."""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path

from winsuite.commands._types import Subparsers
from winsuite.errors import ExitCode


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser("exclusions", help="work with exclusion lists")
    commands = parser.add_subparsers(dest="exclusions_command", required=True, metavar="COMMAND")
    lint = commands.add_parser("lint", help="check exclusion lists; exit non-zero when anything is wrong")
    lint.add_argument("files", nargs="+", metavar="FILE")
    lint.add_argument("--names", metavar="FILE", action="append",
                      help="also lint against these upstream names (e2e.test --list-tests output; the pinned "
                      "version's list in jobs/upstream-names/ is always included); repeatable")
    lint.add_argument("--today", type=datetime.date.fromisoformat, default=None,
                      help="the date expiries are checked against (default: today)")
    lint.set_defaults(handler=run_lint)


def run_lint(args: argparse.Namespace) -> int:
    from winsuite.inputs.pins import load_pins
    from winsuite.paths import upstream_names_file
    from winsuite.policy.catalog import collect
    from winsuite.policy.exclusions import lint
    from winsuite.policy.exclusions import read_exclusion_file
    from winsuite.policy.upstream_names import read_names_file

    names = [e.spec.full_name for e in collect()]
    pinned = upstream_names_file(load_pins().kubernetes)
    for names_file in [pinned] * pinned.exists() + list(args.names or ()):
        names += read_names_file(names_file)
    entries = [e for path in args.files for e in read_exclusion_file(Path(path))]
    problems = lint(entries, names, args.today or datetime.date.today())
    for problem in problems:
        print(problem)
    print(f"{len(entries)} entries in {len(args.files)} file(s), checked against {len(names)} names: "
          f"{len(problems)} problem(s)")
    return int(ExitCode.LINT_FAILED) if problems else 0
