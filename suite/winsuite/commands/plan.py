"""`winsuite plan`: the KEP-116 plan's coverage, per tier and per item."""

from __future__ import annotations

import argparse
from pathlib import Path

from winsuite.commands._output import print_json
from winsuite.commands._output import print_table
from winsuite.commands._types import Subparsers
from winsuite.errors import DataError
from winsuite.paths import jobs_dir
from winsuite.policy.plan import TIERS
from winsuite.policy.plan import Coverage


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser("plan", help="show which plan items are covered by tests or exclusions")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.set_defaults(handler=run)


def exclusion_ids() -> set[str]:
    from winsuite.policy.exclusions import read_exclusion_file

    ids = set()
    for path in sorted(Path(jobs_dir() / "exclusions").glob("*.yaml")):
        ids |= {e.id for e in read_exclusion_file(path) if e.id}
    return ids


def plan_coverage() -> list[Coverage]:
    from winsuite.policy.catalog import collect
    from winsuite.policy.plan import coverage
    from winsuite.policy.plan import load_plan

    result = coverage(load_plan(), [e.spec.full_name for e in collect()], exclusion_ids())
    for cov in result:
        if cov.unknown:  # a plan naming a test or exclusion that does not exist is wrong data
            raise DataError(cov.item.file, cov.item.id, f"names unknown tests or exclusions: {'; '.join(cov.unknown)}")
    return result


def run(args: argparse.Namespace) -> int:
    result = plan_coverage()
    uncovered = [c.item.id for c in result if not c.covered]
    if args.format == "json":
        print_json({
            "items": [{"id": c.item.id, "tier": c.item.tier, "title": c.item.title, "source": c.item.source_text,
                       "tests": list(c.tests), "exclusions": list(c.exclusions)} for c in result],
            "uncovered": uncovered,
        })
        return 0
    print_table(["TIER", "ITEMS", "COVERED", "BY TESTS", "BY EXCLUSIONS"], [
        [tier, str(len(cs)), str(sum(c.covered for c in cs)), str(sum(bool(c.tests) for c in cs)),
         str(sum(bool(c.exclusions) and not c.tests for c in cs))]
        for tier in TIERS for cs in [[c for c in result if c.item.tier == tier]]
    ])
    print()
    print_table(["ITEM", "TESTS", "EXCL", "TITLE"], [
        [c.item.id, str(len(c.tests)), str(len(c.exclusions)), c.item.title + ("" if c.covered else "   <- UNCOVERED")]
        for c in result
    ])
    print(f"\n{len(result) - len(uncovered)} of {len(result)} items covered; {len(uncovered)} uncovered")
    return 0
