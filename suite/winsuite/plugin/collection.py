"""Collection -> selection: validate names and tags, apply focus/skip/exclusions, split phases, order Slow first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from winsuite.authoring.naming import Slow
from winsuite.authoring.naming import Spec
from winsuite.authoring.naming import spec_of
from winsuite.authoring.registry import check_specs
from winsuite.inputs.engines import Engine
from winsuite.plugin.results_writer import NAME_KEY
from winsuite.plugin.results_writer import ROW_KEY
from winsuite.plugin.results_writer import WINSUITE_PROPERTY
from winsuite.policy.catalog import DIRECTORY_TIERS
from winsuite.policy.plan import load_plan
from winsuite.policy.run_config import RunConfig
from winsuite.policy.selection import Outcome
from winsuite.policy.selection import Verdict
from winsuite.policy.selection import in_phase
from winsuite.policy.shards import ShardedTest
from winsuite.policy.shards import expected_durations
from winsuite.results import durations
from winsuite_reports.conventions import RowProperties


def result_properties(item: pytest.Item, spec: Spec, verdict: Verdict) -> dict[str, Any]:
    """What the results writer puts on each JUnit row (its name, and its properties as JUnit spells them); travels
    with the reports from xdist workers."""
    plan_items = load_plan().items_of_test(spec.full_name)
    module = getattr(item, "module", None)
    directory = module.__name__.split(".")[2] if module and module.__name__.count(".") >= 3 else ""
    properties = RowProperties(
        engine=Engine.NATIVE, tags=tuple(t.value for t in spec.tags),
        tier=plan_items[0].tier if plan_items else DIRECTORY_TIERS.get(directory, ""), category=spec.category or "",
        plan_items=tuple(i.id for i in plan_items),
        excluded=verdict.exclusion.skip_reason() if verdict.exclusion else "")
    return {NAME_KEY: spec.full_name, ROW_KEY: properties.to_junit(1)}


class Selection:
    """Registered as a plugin in pytest_configure; acts only on winsuite tests (items with a Spec)."""

    def __init__(self, run: Callable[[], RunConfig]) -> None:
        self._run = run  # built lazily: only a session with winsuite tests needs a job

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        specs = [s for s in (spec_of(i) for i in items) if s is not None]
        if not specs:
            return
        run = self._run()
        problems = check_specs(specs)
        if problems:
            raise pytest.UsageError(
                f"{len(problems)} problem(s) with test names and tags:\n" + "\n".join(problems)
            )
        kept: list[pytest.Item] = []
        deselected: list[pytest.Item] = []
        for item in items:
            spec = spec_of(item)
            if spec is None:
                kept.append(item)
                continue
            if not in_phase(spec.tags, run.phase):
                deselected.append(item)
                continue
            verdict = run.policy.decide(spec.full_name, spec.tags)
            if verdict.outcome is Outcome.DESELECT:
                deselected.append(item)
                continue
            if verdict.outcome is Outcome.SKIP:
                item.add_marker(pytest.mark.skip(reason=verdict.reason))
            item.user_properties.append((WINSUITE_PROPERTY, result_properties(item, spec, verdict)))
            kept.append(item)
        if deselected:
            config.hook.pytest_deselected(items=deselected)
        # The longest first, as far as this machine's record of earlier runs knows (durations), so none starts at
        # the end and stretches the phase while the other workers sit idle; Slow ones first of all (as upstream).
        record = run.output.artifacts / durations.SNAPSHOT_FILE if run.output is not None else None
        if record is not None and record.is_file():
            planned = {i.nodeid: ShardedTest(s.full_name if (s := spec_of(i)) else i.nodeid) for i in kept}
            expected = expected_durations(list(planned.values()), durations.load(record))
            kept.sort(key=lambda i: -expected[planned[i.nodeid].name])
        kept.sort(key=lambda i: 0 if (s := spec_of(i)) is not None and s.has(Slow) else 1)
        items[:] = kept
