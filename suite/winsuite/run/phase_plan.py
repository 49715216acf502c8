"""What a run will do, known before any phase starts: per phase, its native tests and its upstream specs."""

from __future__ import annotations

import dataclasses

from winsuite.inputs.engines import Engine
from winsuite.policy.catalog import Entry
from winsuite.policy.catalog import engine_catalog
from winsuite.policy.run_config import RunConfig
from winsuite.policy.selection import Outcome
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome as Result
from winsuite.run.engines.ginkgo_phase import NODEID
from winsuite.run.engines.ginkgo_report import UPSTREAM

PHASE_NAMES = ("parallel", "serial")


@dataclasses.dataclass
class PhasePlan:
    native: int = 0  # winsuite tests pytest will report (its skips included)
    upstream: list[str] = dataclasses.field(default_factory=list)  # specs ginkgo runs
    upstream_skipped: list[Attempt] = dataclasses.field(default_factory=list)  # rows written without running

    @property
    def total(self) -> int:
        return self.native + len(self.upstream) + len(self.upstream_skipped)


def plan_run(run: RunConfig, natives: list[Entry], upstream_names: list[str]) -> dict[str, PhasePlan]:
    """Every selected test in its phase; upstream specs the policy skips become skipped rows with its reason."""
    plan = {name: PhasePlan() for name in PHASE_NAMES}
    for test in engine_catalog(natives, upstream_names, run.job.engine):
        verdict = run.policy.decide(test.name, test.tags)
        if verdict.outcome is Outcome.DESELECT:
            continue
        phase = plan["serial" if test.serial else "parallel"]
        if test.engine is Engine.NATIVE:
            phase.native += 1
        elif verdict.outcome is Outcome.SKIP:
            excluded = verdict.exclusion.skip_reason() if verdict.exclusion else ""
            phase.upstream_skipped.append(skipped_row(test.name, verdict.reason, excluded))
        else:
            phase.upstream.append(test.name)
    return plan


def skip_upstream(plan: dict[str, PhasePlan], reason: str) -> int:
    """The cluster cannot run upstream specs: every one is skipped with `reason`; how many were."""
    count = 0
    for phase in plan.values():
        phase.upstream_skipped += [skipped_row(name, reason) for name in phase.upstream]
        count += len(phase.upstream)
        phase.upstream = []
    return count


def skipped_row(name: str, reason: str, excluded: str = "") -> Attempt:
    return Attempt(name, NODEID, Result.SKIPPED, message=reason,
                   properties=dataclasses.replace(UPSTREAM, excluded=excluded))
