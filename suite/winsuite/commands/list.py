"""`winsuite list`: what a run would select and why every other test is out; or ginkgo selection over a names file."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING
from typing import Any

from winsuite.authoring.capabilities import Capability
from winsuite.commands import _cluster
from winsuite.commands._output import print_json
from winsuite.commands._output import warn
from winsuite.commands._types import Subparsers
from winsuite.errors import UsageError
from winsuite.inputs.pins import load_pins
from winsuite.paths import RESULTS_ROOT
from winsuite.policy import options
from winsuite.policy.selection import Outcome
from winsuite.policy.selection import Selector
from winsuite.policy.shard_selection import sharded_tests
from winsuite.policy.shards import ShardedTest
from winsuite.policy.shards import cut_shards
from winsuite.policy.shards import shards_document
from winsuite.policy.upstream_names import names_for_minor
from winsuite.policy.upstream_names import read_names_file

if TYPE_CHECKING:
    from winsuite.policy.catalog import CatalogTest
    from winsuite.policy.catalog import Entry
    from winsuite.policy.run_config import RunConfig

FORMATS = ("table", "names", "json")


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "list",
        help="list the tests a run would select, and why the others are out",
        description="Without --names: the catalog under the job's policy. With --names FILE: ginkgo's "
        "focus/skip over upstream full names (e2e.test --list-tests output), nothing else applied.",
    )
    options.add_to_argparse(parser, options.SELECTION_OPTIONS + options.ASKED_CLUSTER_OPTIONS)
    parser.add_argument("--names", metavar="FILE", help="apply --focus/--skip to these upstream names")
    parser.add_argument("--ops-readiness", metavar="DIR_OR_FILE", nargs="+",
                        help="show what each test case of these windows-operational-readiness specifications selects")
    parser.add_argument("--category", action="append", default=[],
                        help="with --ops-readiness: only the test cases of this category (repeatable)")
    parser.add_argument("--shards", type=int, metavar="N",
                        help="cut the tests to run into N shards of even expected duration (this machine's record of "
                             "earlier runs, else the tests' declared slowness; serial tests together) and show them")
    parser.add_argument("--results-root", metavar="DIR", default=RESULTS_ROOT,
                        help="with --shards: cut by the durations of the job's stored builds under DIR/<job>/ (newest "
                             f"five), over this machine's record of the job on its cluster (default: {RESULTS_ROOT})")
    parser.add_argument("--format", choices=FORMATS, default="table")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    get = vars(args).get
    if args.names:
        return _list_names(args)
    from winsuite.policy.catalog import engine_catalog
    from winsuite.policy.run_config import resolve_run

    flags = options.overrides(get, options.SELECTION_OPTIONS + options.ASKED_CLUSTER_OPTIONS)
    config = resolve_run(options.job_ref(get), flags)
    for message in config.repo_list.warnings:
        warn(message)
    if args.category and not args.ops_readiness:
        raise UsageError("--category needs --ops-readiness")
    if args.shards is not None and (args.shards < 1 or args.ops_readiness):
        raise UsageError("--shards needs a number of shards of at least 1, and no --ops-readiness")
    if _cluster.asked(args):
        config = _cluster.discovered(config)
    if args.ops_readiness:
        return _list_ops_cases(args, config)
    rows: list[dict[str, Any]] = []
    catalog = engine_catalog(_natives(config.job.engine), _upstream(config), config.job.engine)
    if args.shards is not None:
        from pathlib import Path

        from winsuite.results import durations

        recorded = durations.for_planning(Path(args.results_root) / config.job.name, durations.key_of(config))
        return _list_shards(config, sharded_tests(config, catalog), args.shards, args.format, recorded)
    for test in catalog:
        status, reason = _fate(config, test)
        native = test.native
        rows.append({"status": status, "engine": str(test.engine), "name": test.name, "reason": reason,
                     "needs": [n.name for n in native.spec.needs] if native else [],
                     "location": native.spec.location if native else ""})
    facts = config.facts
    if args.format == "json":
        cluster = {"server": facts.server, "version": facts.server_version} if facts is not None else None
        print_json({"job": config.job.name, "why": config.job.why, "targetOS": config.target_os,
                    "engine": config.job.engine, "cluster": cluster, "tests": rows})
    elif args.format == "names":
        print("\n".join(r["name"] for r in rows if r["status"] == "run"))
    else:
        print(f"job {config.job.name} ({config.job.why}; {config.job.source}), target OS {config.target_os}, "
              f"engine {config.job.engine}")
        if facts is not None:
            print(_cluster.described(facts))
        for r in rows:
            print(f"{r['status']:<4}  {r['engine']:<8}  {r['name']}")
            if r["reason"]:
                print(f"                {r['reason']}")
        counts = {s: sum(r["status"] == s for r in rows) for s in ("run", "skip", "out")}
        by_engine = {e: sum(r["status"] == "run" and r["engine"] == e for r in rows) for e in ("native", "upstream")}
        print(f"{counts['run']} to run ({by_engine['native']} native, {by_engine['upstream']} upstream), "
              f"{counts['skip']} skipped with a reason, {counts['out']} not selected")
    return 0


def _fate(config: RunConfig, test: CatalogTest) -> tuple[str, str]:
    """run, skip or out, and why: the job's policy, then (a cluster asked) what the cluster lacks for the test, as
    a run decides it (a native test by its needs; upstream specs need a node that runs the target OS's
    containers)."""
    verdict = config.policy.decide(test.name, test.tags)
    status = {Outcome.RUN: "run", Outcome.SKIP: "skip", Outcome.DESELECT: "out"}[verdict.outcome]
    if status != "run" or config.facts is None:
        return status, verdict.reason
    needs = test.native.spec.needs if test.native is not None else (Capability.RUNS_CONTAINERS,)
    lacking = config.facts.skip_reason(needs, config.target_os)
    return ("run", verdict.reason) if lacking is None else ("skip", lacking)


def _list_shards(config: RunConfig, tests: list[ShardedTest], count: int, output: str,
                 recorded: dict[str, float]) -> int:
    """The plan a sharded run would follow: per shard, its tests and their expected duration."""
    shards = cut_shards(tests, count, recorded)
    if output == "json":
        print_json(shards_document(config.job.name, shards))
        return 0
    for shard in shards:
        if output == "table":
            print(f"shard {shard.number}/{count}: {len(shard.tests)} test(s), expected {_duration(shard.expected)}")
        for name in shard.tests:
            print(f"    {name}" if output == "table" else f"{shard.number}\t{name}")
    return 0


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


def _list_ops_cases(args: argparse.Namespace, config: RunConfig) -> int:
    """Per windows-operational-readiness test case: what it selects of the catalog, and whether the job runs it;
    and each specification with no test cases."""
    from winsuite.policy.catalog import engine_catalog
    from winsuite.policy.ops_readiness import NO_CASES
    from winsuite.policy.ops_readiness import cases_of
    from winsuite.policy.ops_readiness import load_specifications
    from winsuite.policy.ops_readiness import select

    tests = {t.name: t for t in engine_catalog(_natives(config.job.engine), _upstream(config), config.job.engine)}
    specs = load_specifications(args.ops_readiness, args.category)
    version = config.facts.server_version if config.facts is not None else load_pins().kubernetes
    selections = select(cases_of(specs), tests, kubernetes_version=version)
    cases: list[dict[str, Any]] = [
        {"category": s.case.category, "description": s.case.description, "source": s.case.source,
         "notApplicable": s.not_applicable or "",
         "tests": [{"name": n, "engine": str(tests[n].engine),
                    "status": _fate(config, tests[n])[0]} for n in s.names]}
        for s in selections]
    empty = [{"category": spec.category, "source": spec.source} for spec in specs if not spec.cases]
    if args.format == "json":
        print_json({"job": config.job.name, "targetOS": config.target_os, "cases": cases,
                    "categoriesWithoutCases": empty})
        return 0
    if args.format == "names":
        print("\n".join(sorted({t["name"] for c in cases for t in c["tests"] if t["status"] == "run"})))
        return 0
    for case in cases:
        print(f"{case['category']}: {case['description']}")
        if case["notApplicable"]:
            print(f"    does not apply: {case['notApplicable']}")
        if not case["tests"]:
            print(f"    selects nothing ({case['source']})")
        for test in case["tests"]:
            print(f"    {test['status']:<4}  {test['engine']:<8}  {test['name']}")
    for spec in empty:
        print(f"{spec['category']}: {NO_CASES} ({spec['source']})")
    selecting_nothing = sum(not c["tests"] for c in cases)
    print(f"{len(specs)} specification(s), {len(cases)} test case(s), "
          f"{len({t['name'] for c in cases for t in c['tests']})} test(s) selected, "
          f"{selecting_nothing} case(s) selecting nothing, {len(empty)} specification(s) with no test cases")
    return 0


def _natives(engine: str) -> list[Entry]:
    from winsuite.policy.catalog import collect

    return [] if engine == "upstream" else collect()


def _upstream(config: RunConfig) -> list[str]:
    """The kept `e2e.test --list-tests` of the cluster's Kubernetes minor; without a cluster (or a list kept for its
    minor), the pinned version's stands in."""
    if config.job.engine == "native":
        return []
    pinned = load_pins().kubernetes
    if config.facts is not None:
        names = names_for_minor(config.facts.server_version)
        if names is not None:
            return names
        warn(f"no upstream test names kept for the cluster's Kubernetes {config.facts.server_version} "
             f"(jobs/upstream-names/): those of {pinned} stand in (a run lists its e2e.test's)")
    names = names_for_minor(pinned)
    if names is None:
        raise UsageError(f"no upstream test names kept for Kubernetes {pinned} (jobs/upstream-names/)")
    return names


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
