"""What a run selects before its phases start: the tests that need a capability, and the run narrowed to its
ops-readiness cases or to its shard."""

from __future__ import annotations

from collections.abc import Callable

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.facts import ClusterFacts
from winsuite.policy.catalog import Entry
from winsuite.policy.catalog import engine_catalog
from winsuite.policy.ops_readiness import NO_CASES
from winsuite.policy.run_config import RunConfig
from winsuite.policy.selection import Outcome as Selected
from winsuite.policy.shard_selection import shard_tests
from winsuite.run.ops_run import OpsRun

Say = Callable[[str], None]


def selects_a_test_needing(run: RunConfig, natives: list[Entry], capability: Capability) -> bool:
    """Whether a native test the run selects needs `capability` (discovery then observes it at a cost)."""
    return any(capability in entry.spec.needs and run.policy.decide(entry.spec.full_name, entry.spec.tags).outcome
               is not Selected.DESELECT for entry in natives)


def to_ops_cases(run: RunConfig, ops: OpsRun, names: list[str], facts: ClusterFacts, say: Say) -> RunConfig:
    """--ops-readiness: the run selects exactly what the cases that apply select."""
    narrowed = run.narrowed(ops.select(names, facts), "ops-readiness test cases")
    for selection in ops.selections:
        state = selection.not_applicable or f"{len(selection.names)} test(s)"
        say(f"ops-readiness {selection.case.category}: {selection.case.description}: {state}")
    for spec in ops.empty:
        say(f"ops-readiness {spec.category}: {NO_CASES}")
    return narrowed


def to_shard(run: RunConfig, natives: list[Entry], names: list[str], say: Say) -> RunConfig:
    """--shard I/N: the run selects exactly the tests of its shard of the selection."""
    assert run.shard is not None
    plan = list(run.shard_plan) if run.shard_plan is not None else None
    shard = shard_tests(run, engine_catalog(natives, names, run.job.engine), run.shard, plan)
    narrowed = run.narrowed(list(shard.tests), f"shard {run.shard}")
    say(f"shard {narrowed.shard}: {len(shard.tests)} test(s), expected {shard.expected:.0f}s"
        + (" (from the plan file)" if plan else " (cut by declared slowness)"))
    return narrowed
