"""winsuite.authoring naming and registry: names rendered like upstream, tags as markers, the closed registry."""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest

from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Feature
from winsuite.authoring.naming import FeatureGate
from winsuite.authoring.naming import LinuxOnly
from winsuite.authoring.naming import NodeConformance
from winsuite.authoring.naming import Segment
from winsuite.authoring.naming import Serial
from winsuite.authoring.naming import Slow
from winsuite.authoring.naming import Spec
from winsuite.authoring.naming import Tag
from winsuite.authoring.naming import render
from winsuite.authoring.naming import specs_of_function
from winsuite.authoring.registry import Registry
from winsuite.authoring.registry import check_specs
from winsuite.authoring.registry import load_registry
from winsuite.inputs.pins import load_pins
from winsuite.paths import upstream_names_file
from winsuite.policy.catalog import collect
from winsuite.policy.upstream_names import read_names_file

# Segments as a winsuite test declares them, and the name upstream e2e.test lists for that test.
UPSTREAM_RENDERINGS: list[tuple[tuple[Segment, ...], str]] = [
    ((Area("sig-network"), "Networking", "Granular Checks: Pods", "should function for intra-pod communication: http",
      NodeConformance, Conformance),
     "[sig-network] Networking Granular Checks: Pods should function for intra-pod communication: http "
     "[NodeConformance] [Conformance]"),
    # tags in the middle of a name
    ((Area("sig-node"), NodeConformance, FeatureGate("SidecarContainers"),
      "Restartable Init Container Lifecycle Hook", "when create a pod with lifecycle hook",
      "should execute poststart exec hook properly"),
     "[sig-node] [NodeConformance] [FeatureGate:SidecarContainers] Restartable Init Container Lifecycle Hook when "
     "create a pod with lifecycle hook should execute poststart exec hook properly"),
    ((Area("sig-storage"), "EmptyDir volumes", "should support (root,0644,tmpfs)", LinuxOnly, NodeConformance,
      Conformance),
     "[sig-storage] EmptyDir volumes should support (root,0644,tmpfs) [LinuxOnly] [NodeConformance] [Conformance]"),
    ((Area("sig-windows"), Feature("Windows"), "", "Cpu Resources", Serial, "Container limits",
      "should not be exceeded after waiting 2 minutes"),
     "[sig-windows] [Feature:Windows] Cpu Resources [Serial] Container limits should not be exceeded after "
     "waiting 2 minutes"),
]


@pytest.fixture(scope="module")
def upstream_names() -> set[str]:
    return set(read_names_file(upstream_names_file(load_pins().kubernetes)))


@pytest.mark.parametrize(("segments", "name"), UPSTREAM_RENDERINGS)
def test_renders_like_upstream(segments: tuple[Segment, ...], name: str, upstream_names: set[str]) -> None:
    assert render(segments) == name
    assert name in upstream_names  # the expectation itself is a real upstream name


@pytest.mark.parametrize(
    ("tag", "marker"),
    [
        (Serial, "serial"),
        (Feature("Windows"), "feature_windows"),
        (LinuxOnly, "linux_only"),
        (NodeConformance, "node_conformance"),
        (Tag("Excluded:WindowsDocker"), "excluded_windows_docker"),
        (FeatureGate("InPlacePodVerticalScaling"), "feature_gate_in_place_pod_vertical_scaling"),
        (Feature("Networking-IPv4"), "feature_networking_ipv4"),
        (Area("sig-node"), "sig_node"),
    ],
)
def test_tags_become_pytest_markers(tag: Tag, marker: str) -> None:
    assert tag.marker == marker


def test_tag_family() -> None:
    assert (Feature("Windows").family, Serial.family) == ("Feature", None)


group = Describe(Area("sig-windows"), Feature("Windows")).describe("Scheduling")


@group.it("should place pods", Serial, category="Core.Scheduling", images=["agnhost"])
def sample(value: int = 0) -> None:
    """A declared test, inspected (never run) by the tests below."""


@group.it_each("accepts {entry}", Slow, argname="value", entries={"one": 1, "two": 2},
               twins={"two": "[sig-windows] [Feature:Windows] Scheduling accepts two [Slow]"})
def sample_table(value: int) -> None:
    """A declared table of tests, inspected (never run) by the tests below."""


def marks(fn: Callable[..., Any]) -> list[str]:
    return [m.name for m in getattr(fn, "pytestmark", [])]


def test_it_declares_a_spec_with_markers_and_location() -> None:
    ((spec, param),) = specs_of_function(sample)
    assert param is None
    assert spec.full_name == "[sig-windows] [Feature:Windows] Scheduling should place pods [Serial]"
    assert (spec.area, spec.category, spec.images) == ("sig-windows", "Core.Scheduling", ("agnhost",))
    assert spec.has(Serial) and not spec.has(Slow)
    assert spec.location == f"{__file__}:{inspect.getsourcelines(sample)[1]}"  # the declaration's first line
    assert {"e2e", "serial", "feature_windows", "sig_windows"} <= set(marks(sample))


def test_it_each_declares_one_spec_per_entry() -> None:
    specs = specs_of_function(sample_table)
    assert [(s.full_name, param) for s, param in specs] == [
        ("[sig-windows] [Feature:Windows] Scheduling accepts one [Slow]", "one"),
        ("[sig-windows] [Feature:Windows] Scheduling accepts two [Slow]", "two"),
    ]
    assert [s.twin for s, _ in specs] == [None, "[sig-windows] [Feature:Windows] Scheduling accepts two [Slow]"]
    (parametrize,) = [m for m in getattr(sample_table, "pytestmark", []) if m.name == "parametrize"]
    assert [[m.name for m in p.marks] for p in parametrize.args[1]] == [["e2e", "sig_windows", "feature_windows",
                                                                         "slow"]] * 2


def spec(*segments: Segment, line: int = 1, **fields: Any) -> Spec:
    return dataclasses.replace(Spec(segments=segments, file="tests/x.py", line=line), **fields)


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry()


def test_unknown_tags_and_duplicate_names_are_reported_together(registry: Registry) -> None:
    problems = check_specs(
        [
            spec(Area("sig-node"), "Pods", "work", Tag("Seriall"), line=10),
            spec(Area("sig-node"), "Pods", "work", Feature("Windwos"), line=20),
            spec(Area("sig-node"), "Pods", "twice", line=30),
            spec(Area("sig-node"), "Pods", "twice", line=40),
        ],
        registry,
    )
    assert len(problems) == 3
    assert problems[0].startswith(
        "tests/x.py:10: unknown tag [Seriall] in '[sig-node] Pods work [Seriall]'; known tags: "
    )
    assert problems[1].startswith(
        "tests/x.py:20: unknown tag [Feature:Windwos] in '[sig-node] Pods work [Feature:Windwos]'; known Feature "
        "values: "
    )
    assert problems[2] == (
        "tests/x.py:30: duplicate full name '[sig-node] Pods twice', declared at tests/x.py:30, tests/x.py:40"
    )


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        (spec("Pods", "work"), "tests/x.py:1: a test name must start with its area, one of ["),
        (spec(Area("sig-nodes"), "Pods"), "tests/x.py:1: a test name must start with its area"),
        (spec(Area("sig-node"), "Pods", "work", twin="[sig-node] Pods works"),
         "tests/x.py:1: name differs from its upstream twin:\n  winsuite: [sig-node] Pods work\n"
         "  upstream: [sig-node] Pods works"),
        (spec(Area("sig-node"), "Pods", category="Core.Networking"),
         "tests/x.py:1: unknown KEP-2578 category 'Core.Networking'; known: Core.Network, "),
    ],
)
def test_spec_problems_name_the_location(registry: Registry, bad: Spec, problem: str) -> None:
    assert check_specs([bad], registry)[0].startswith(problem)


@pytest.mark.parametrize(
    ("tag", "known"),
    [
        (Serial, True),
        (Area("sig-windows"), True),
        (Feature("Windows"), True),
        (FeatureGate("SidecarContainers"), True),
        (Tag("Excluded:WindowsDocker"), True),
        (Feature("Nope"), False),
        (Tag("Nope:Windows"), False),
        (Tag("serial"), False),
    ],
)
def test_registry_is_closed(registry: Registry, tag: Tag, known: bool) -> None:
    assert registry.knows(tag) is known


def test_registry_lists_every_tag_it_knows(registry: Registry) -> None:
    tags = registry.all_tags()
    assert {Serial, Area("sig-windows"), Feature("Windows")} <= set(tags)
    assert all(registry.knows(t) for t in tags)


def test_every_family_value_upstream_uses_is_registered(registry: Registry, upstream_names: set[str]) -> None:
    used = {Tag(label) for name in upstream_names for label in _labels(name)}
    assert sorted(t.value for t in used if t.family in registry.families and not registry.knows(t)) == []


def _labels(name: str) -> list[str]:
    return re.findall(r"\[([^\[\]]+)\]", name)


def test_the_catalog_passes_its_own_checks(registry: Registry, upstream_names: set[str]) -> None:
    specs = [e.spec for e in collect()]
    assert check_specs(specs, registry) == []
    assert {s.category for s in specs} - {None} <= set(registry.categories)
    assert sorted(s.twin for s in specs if s.twin and s.twin not in upstream_names) == []
