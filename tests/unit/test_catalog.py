"""policy/catalog.py: one catalog of native tests and upstream specs, each with the engine that runs it."""

from __future__ import annotations

import pytest

from winsuite.authoring.naming import Serial
from winsuite.authoring.naming import Tag
from winsuite.inputs.engines import Engine
from winsuite.inputs.pins import load_pins
from winsuite.policy.catalog import Entry
from winsuite.policy.catalog import collect
from winsuite.policy.catalog import engine_catalog
from winsuite.policy.catalog import tags_of_name
from winsuite.policy.run_config import resolve_run
from winsuite.policy.upstream_names import names_for_minor
from winsuite.run.phase_plan import plan_run
from winsuite.run.phase_plan import skip_upstream


@pytest.fixture(scope="module")
def natives() -> list[Entry]:
    return collect()


@pytest.fixture(scope="module")
def upstream() -> list[str]:
    names = names_for_minor(load_pins().kubernetes)
    assert names is not None
    return names


def test_upstream_tags_are_read_from_the_name() -> None:
    name = "[sig-apps] Daemon set [Serial] should run and stop simple daemon [Conformance]"
    assert tags_of_name(name) == (Tag("sig-apps"), Serial, Tag("Conformance"))


def test_auto_runs_native_ports_and_upstream_for_the_rest(natives: list[Entry], upstream: list[str]) -> None:
    tests = engine_catalog(natives, upstream, "auto")
    engines = {t.name: t.engine for t in tests}
    assert len(engines) == len(tests), "a test runs once with auto"
    twins = [e.spec.full_name for e in natives if e.spec.twin]
    assert twins and all(engines[name] is Engine.NATIVE for name in twins)
    assert set(upstream) <= set(engines)
    assert sum(e is Engine.UPSTREAM for e in engines.values()) == len(set(upstream) - set(twins))


def test_native_upstream_and_both(natives: list[Entry], upstream: list[str]) -> None:
    assert [t.native for t in engine_catalog(natives, upstream, "native")] == natives
    only_upstream = engine_catalog(natives, upstream, "upstream")
    assert [t.name for t in only_upstream] == list(dict.fromkeys(upstream))
    assert all(t.engine is Engine.UPSTREAM and t.native is None for t in only_upstream)
    both = engine_catalog(natives, upstream, "both")
    twin = next(e.spec.full_name for e in natives if e.spec.twin)
    assert sorted(t.engine for t in both if t.name == twin) == [Engine.NATIVE, Engine.UPSTREAM]
    assert len(both) == len(natives) + len(set(upstream))


def test_serial_upstream_specs_go_to_the_serial_phase(upstream: list[str]) -> None:
    tests = engine_catalog([], upstream, "upstream")
    serial = [t for t in tests if t.serial]
    assert serial and all("[Serial]" in t.name or "[Disruptive]" in t.name for t in serial)


def test_a_run_plan_puts_every_selected_test_in_its_phase_with_the_policys_skips(
        natives: list[Entry], upstream: list[str]) -> None:
    run = resolve_run("sig-windows-parallel", {"engine": "auto"}, environ={})
    plan = plan_run(run, natives, upstream)
    parallel, serial = plan["parallel"], plan["serial"]
    assert serial.total == 0  # the job skips [Serial]
    skipped = {row.name: row for row in parallel.upstream_skipped}
    guestbook = next(name for name in skipped if "Guestbook" in name)
    assert skipped[guestbook].message.startswith("excluded: the guestbook images have no Windows variants")
    assert skipped[guestbook].properties.excluded.startswith("excluded:")
    assert len(parallel.upstream) + len(parallel.upstream_skipped) + parallel.native > 463
    assert not set(parallel.upstream) & {e.spec.full_name for e in natives}
    assert skip_upstream(plan, "requires a node that runs Windows containers (found: none)") == len(
        [n for n in parallel.upstream_skipped if n.message.startswith("requires")])
    assert parallel.upstream == [] and all(r.outcome.value == "skipped" for r in parallel.upstream_skipped)
