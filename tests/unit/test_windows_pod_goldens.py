"""The pods each test creates on a Windows target, rendered without a cluster and compared with golden files.

Every test of the Windows tiers (`cases/windows`, `cases/substitute`) and every other test with a Windows
branch declares how its pods are built (`winsuite.authoring.windows_pods`) or that it creates none. The pods are
rendered per Windows build of the image catalog, through the real image catalog and the default repo list, and
written to golden/windows_pods/<module>.<test>[.<entry>].yaml with the upstream file:line they were checked
against. `pytest --update-golden` rewrites them; review the diff as a change of what runs on Windows nodes.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import pkgutil
import random
import re
import secrets
import uuid
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from winsuite import cases
from winsuite.authoring import windows_pods
from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.facts import NodeFacts
from winsuite.authoring.naming import LinuxOnly
from winsuite.authoring.naming import Spec
from winsuite.authoring.naming import specs_of_function
from winsuite.authoring.target import Target
from winsuite.authoring.targeting import Placement
from winsuite.inputs.images import ImageUnavailable
from winsuite.inputs.images import load_image_catalog

GOLDEN = Path(__file__).parent / "golden" / "windows_pods"
WINDOWS_TIERS = ("winsuite.cases.windows.", "winsuite.cases.substitute.")
# What makes a test's pods differ on Windows: its own code, or a function of its module, branching on the target
# OS, or one of the helpers that do (restricted and non-root security contexts, file modes).
WINDOWS_BRANCH = re.compile(r"target\.os\b|target_os|\.restricted\(|run_as_non_root\(|file_mode_regex\(|\"windows\"")
CATALOG = load_image_catalog()


def _node(name: str, os_name: str, build: str | None) -> NodeFacts:
    return NodeFacts(name=name, os=os_name, windows_build=build, kubelet_version="v1.36.3",
                     container_runtime="containerd://1.7.20", os_image="", kernel_version="", simulated=False,
                     ready=True, unschedulable=False, taints=[], labels={"kubernetes.io/os": os_name},
                     allocatable={"cpu": "4", "memory": "16Gi"}, capacity={"cpu": "4", "memory": "16Gi"},
                     internal_ip="10.1.0.4" if os_name == "windows" else "10.1.0.5", provider_id=None)


FACTS = ClusterFacts(server="https://127.0.0.1:6443", server_version="v1.36.3",
                     nodes=[_node("win-0", "windows", "10.0.20348"), _node("linux-0", "linux", None)],
                     cluster_dns=True, metrics_api=False, runtime_classes=[], egress_allowed=False, warnings=[])


def _modules() -> Iterator[ModuleType]:
    for found in pkgutil.walk_packages(cases.__path__, cases.__name__ + "."):
        if found.name.rsplit(".", 1)[-1].startswith("test_"):
            yield importlib.import_module(found.name)


def _tests() -> list[tuple[str, Callable[..., Any]]]:
    """Every declared test function: (module.function, function)."""
    return [(f"{module.__name__}.{name}", fn) for module in _modules()
            for name, fn in inspect.getmembers(module, inspect.isfunction)
            if name.startswith("test_") and fn.__module__ == module.__name__ and specs_of_function(fn)]


def _in_scope(qualified: str, fn: Callable[..., Any]) -> bool:
    """A test of the Windows tiers, or one with a Windows branch that may run on Windows (not [LinuxOnly])."""
    if qualified.startswith(WINDOWS_TIERS):
        return True
    if all(spec.has(LinuxOnly) for spec, _ in specs_of_function(fn)):
        return False
    module = inspect.getmodule(fn)
    branching = {name for name, helper in inspect.getmembers(module, inspect.isfunction)
                 if helper.__module__ == fn.__module__ and not name.startswith("test_")
                 and WINDOWS_BRANCH.search(inspect.getsource(helper))}
    source = inspect.getsource(fn)
    return bool(WINDOWS_BRANCH.search(source)) or any(re.search(rf"\b{name}\(", source) for name in branching)


def _table_values(fn: Callable[..., Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for mark in getattr(fn, "pytestmark", []):
        if mark.name == "parametrize":
            values.update({param.id: param.values[0] for param in mark.args[1]})
    return values


def _renderings() -> list[Any]:
    params = []
    for qualified, fn in _tests():
        declared = windows_pods.declared(fn)
        if declared is None or declared.render is None:
            continue
        values = _table_values(fn)
        for spec, entry in specs_of_function(fn):
            suffix = "." + re.sub(r"[^A-Za-z0-9_.-]+", "-", entry).strip("-") if entry else ""
            golden = f"{qualified.removeprefix('winsuite.cases.')}{suffix}.yaml"
            params.append(pytest.param(spec, declared, values.get(entry) if entry else None, entry is not None,
                                       golden, id=golden.removesuffix(".yaml")))
    return params


class _Deterministic:
    """Names built from uuid4, random and secrets come out the same on every rendering."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        counter = itertools.count(1)
        monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=next(counter)))
        monkeypatch.setattr(secrets, "token_hex", lambda n=16: "ab" * (n or 16))
        self._state = random.getstate()
        random.seed(0)

    def restore(self) -> None:
        random.setstate(self._state)


def _render(spec: Spec, declared: windows_pods.WindowsPods, value: Any, is_table: bool,
            monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    rendered: dict[str, Any] = {}
    assert declared.render is not None
    for version in CATALOG.windows_versions.values():
        deterministic = _Deterministic(monkeypatch)
        target = Target(FACTS, spec, Placement(target_os="windows").with_build(version.build),
                        lambda image_id, *, target_os, windows_build: CATALOG.resolve(
                            image_id, target_os=target_os, windows_build=windows_build))
        try:
            rendered[version.name] = declared.render(target, value) if is_table else declared.render(target)
        except ImageUnavailable as err:
            rendered[version.name] = f"not runnable: {err}"
        finally:
            deterministic.restore()
    return rendered


class _NoAliases(yaml.SafeDumper):
    """Every value written out where it is, so that a golden reads like the manifest it is."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _document(spec: Spec, declared: windows_pods.WindowsPods, rendered: dict[str, Any]) -> str:
    no_twin = declared.upstream.startswith("no twin")
    against = declared.upstream if no_twin else f"kubernetes v1.36.3 {declared.upstream}"
    header = f"# {spec.full_name}\n# checked against: {against}\n"
    return header + yaml.dump(rendered, Dumper=_NoAliases, sort_keys=True, width=120, allow_unicode=True)


@pytest.mark.parametrize(("spec", "declared", "value", "is_table", "golden"), _renderings())
def test_windows_pods_match_their_golden(spec: Spec, declared: windows_pods.WindowsPods, value: Any,
                                         is_table: bool, golden: str, monkeypatch: pytest.MonkeyPatch,
                                         pytestconfig: pytest.Config) -> None:
    actual = _document(spec, declared, _render(spec, declared, value, is_table, monkeypatch))
    path = GOLDEN / golden
    if pytestconfig.getoption("--update-golden"):
        path.write_text(actual)
        return
    assert path.is_file(), f"{path} is missing; create it with `pytest {__file__} --update-golden`"
    assert actual == path.read_text(), f"{golden}: the Windows pods differ (`--update-golden` rewrites it)"


def test_every_windows_test_declares_its_pods() -> None:
    undeclared = [f"{inspect.getsourcefile(fn)}:{fn.__code__.co_firstlineno}: {qualified}"
                  for qualified, fn in _tests() if _in_scope(qualified, fn) and windows_pods.declared(fn) is None]
    assert not undeclared, "declare @windows_pods(...) or @no_pods(...) for:\n" + "\n".join(undeclared)


def test_declarations_name_an_upstream_line_or_a_reason() -> None:
    for qualified, fn in _tests():
        declared = windows_pods.declared(fn)
        if declared is not None:
            named = ".go:" in declared.upstream or declared.upstream.startswith("no twin: ")
            assert declared.render is None or named, \
                f"{qualified}: name the upstream file:line, or `no twin: ` and what the test comes from"
            assert declared.render is not None or declared.no_pods_reason, f"{qualified}: why no pods"


def test_every_sig_windows_twin_has_a_golden() -> None:
    twins = {spec.twin for _, fn in _tests() for spec, _ in specs_of_function(fn)
             if spec.twin and spec.twin.startswith("[sig-windows]")}
    rendered = {p.values[0].twin for p in _renderings()}
    no_pods = {spec.twin for _, fn in _tests() for spec, _ in specs_of_function(fn)
               if (d := windows_pods.declared(fn)) is not None and d.render is None}
    assert len(twins) == 38
    assert twins <= rendered | no_pods, f"without a golden: {sorted(twins - rendered - no_pods)}"


def test_no_stale_goldens() -> None:
    expected = {p.values[4] for p in _renderings()}
    stale = sorted(p.name for p in GOLDEN.glob("*.yaml") if p.name not in expected)
    assert not stale, f"goldens of no test: {stale}"
