"""Dependencies point one way (STYLE §3): the whole layer order holds, with no module or package cycle.

The layers, bottom up: winsuite_reports (which reads stored results and never imports winsuite); the top-level modules
of winsuite; authoring; k8s; inputs; components (the kit that builds and runs the pinned components); cluster; policy;
results; plugin; run; commands; cli, and beside it the kubetest2 tester (prow's way in). A module imports its own layer
and those below it. Inside cluster, the two made clusters (embedded, kind) stand side by side on the kit: neither
imports the other. The cases import the authoring vocabulary and the Kubernetes helpers only, and nothing imports them
by name except the case catalog's loader.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.tools.import_graph import ImportGraph
from tests.tools.import_graph import Rule
from tests.tools.import_graph import imported_names
from tests.tools.import_graph import within

ROOT = Path(__file__).resolve().parents[2]
SOURCE_ROOTS = (ROOT / "suite", ROOT / "reports")

BASE = ("winsuite.errors", "winsuite.paths", "winsuite.messages", "winsuite.timeline", "winsuite.process_exit",
        "winsuite.versions", "winsuite.given_paths")
LAYERS = (
    ("winsuite_reports",),
    BASE,
    ("winsuite.authoring",),
    ("winsuite.k8s",),
    ("winsuite.inputs",),
    ("winsuite.components",),
    ("winsuite.cluster",),
    ("winsuite.policy",),
    ("winsuite.results",),
    ("winsuite.plugin",),
    ("winsuite.run",),
    ("winsuite.commands",),
    ("winsuite.cli", "winsuite.kubetest2_tester"),
)
CASES = "winsuite.cases"
RULES = [
    Rule("winsuite_reports", forbidden=("winsuite",), why="reports read stored results only"),
    Rule("winsuite.cluster.embedded", forbidden=("winsuite.cluster.kind",),
         why="the made clusters are siblings on the kit (winsuite.components)"),
    Rule("winsuite.cluster.kind", forbidden=("winsuite.cluster.embedded",),
         why="the made clusters are siblings on the kit (winsuite.components)"),
    Rule(CASES, allowed_only=("winsuite.authoring", "winsuite.k8s"),
         why="cases import the authoring vocabulary and the Kubernetes helpers only"),
]
# The one module that imports names it computes: the case catalog's loader walks a test package.
DYNAMIC_IMPORTERS = {"winsuite.policy.catalog", "winsuite.cli"}  # the cli imports the command asked for alone


@pytest.fixture(scope="module")
def graph() -> ImportGraph:
    return ImportGraph(SOURCE_ROOTS)


def test_the_layer_order_holds(graph: ImportGraph) -> None:
    assert graph.layer_violations(LAYERS, outside=(CASES,)) == []


@pytest.mark.parametrize("rule", RULES, ids=[r.source for r in RULES])
def test_the_rules_outside_the_layers_hold(graph: ImportGraph, rule: Rule) -> None:
    assert sum(1 for m in graph.files if m == rule.source or m.startswith(rule.source + ".")) >= 1
    assert graph.violations(rule) == []


def test_runs_reach_made_clusters_only_through_the_cluster_registries(graph: ImportGraph) -> None:
    """A run builds with the kit, starts a cluster through cluster.base's targets and loads an image through
    cluster.node_images: no module of run/ names the embedded or kind cluster itself."""
    made = ("winsuite.cluster.embedded", "winsuite.cluster.kind")
    direct = [f"{m} -> {t}" for m in sorted(graph.files) if within(m, ["winsuite.run"])
              for t in sorted(graph.edges[m]) if within(t, made)]
    assert direct == []


def test_no_module_import_cycles(graph: ImportGraph) -> None:
    assert graph.cycles() == []


def test_no_module_import_cycles_counting_type_only_imports(graph: ImportGraph) -> None:
    assert graph.cycles(type_checking=True) == []


def test_no_package_import_cycles(graph: ImportGraph) -> None:
    assert graph.package_cycles() == []


def test_only_the_case_catalog_imports_computed_names(graph: ImportGraph) -> None:
    assert set(graph.dynamic_imports()) == DYNAMIC_IMPORTERS


def test_the_graph_sees_the_whole_project(graph: ImportGraph) -> None:
    assert len(graph.files) > 150
    assert "winsuite.run.runner" in graph.edges["winsuite.commands.run"]
    assert "winsuite.errors" in graph.edges["winsuite.cli"]


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_checker_finds_a_cycle_and_a_transitive_back_edge(tmp_path: Path) -> None:
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/policy/__init__.py": "",
        "pkg/policy/jobs.py": "from pkg.policy import images\n",
        "pkg/policy/images.py": "def later() -> None:\n    from pkg.policy.jobs import x\n",
        "pkg/policy/plan.py": "import pkg.helpers\n",
        "pkg/helpers.py": "from pkg.run.runner import Runner\n",
        "pkg/run/__init__.py": "",
        "pkg/run/runner.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.policy import plan\n",
        "pkg/cases/__init__.py": "",
        "pkg/cases/test_x.py": "from pkg.authoring.naming import Describe\nfrom pkg.helpers import y\n",
        "pkg/authoring/__init__.py": "",
        "pkg/authoring/naming.py": "",
    })
    graph = ImportGraph([tmp_path])
    assert graph.cycles() == [["pkg.policy.images", "pkg.policy.jobs"]]
    back_edge = graph.violations(Rule("pkg.policy", forbidden=("pkg.run",)))
    assert back_edge == ["pkg.policy.plan -> pkg.helpers -> pkg.run.runner  (forbidden)"]
    assert graph.violations(Rule("pkg.run", forbidden=("pkg.policy",))) == []  # TYPE_CHECKING is no edge
    assert graph.cycles(type_checking=True) == [["pkg.helpers", "pkg.policy.plan", "pkg.run.runner"],
                                                ["pkg.policy.images", "pkg.policy.jobs"]]
    only = graph.violations(Rule("pkg.cases", allowed_only=("pkg.authoring",)))
    assert only == ["pkg.cases.test_x -> pkg.helpers  (only pkg.authoring allowed)"]


def test_the_checker_finds_a_package_cycle_without_a_module_cycle(tmp_path: Path) -> None:
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/cluster/__init__.py": "",
        "pkg/cluster/kind.py": "from pkg.policy.pins import KIND\n",
        "pkg/cluster/base.py": "",
        "pkg/policy/__init__.py": "",
        "pkg/policy/pins.py": "",
        "pkg/policy/jobs.py": "from pkg.cluster.base import Target\n",
        "pkg/run/__init__.py": "",
        "pkg/run/engines/__init__.py": "",
        "pkg/run/engines/upstream.py": "from pkg.run import plan\n",
        "pkg/run/engines/ginkgo.py": "",
        "pkg/run/plan.py": "from pkg.run.engines.ginkgo import NODEID\n",
    })
    graph = ImportGraph([tmp_path])
    assert graph.cycles() == []
    assert graph.package_cycles() == [["pkg.cluster", "pkg.policy"], ["pkg.run.engines", "pkg.run.plan"]]


def test_the_checker_finds_a_layer_order_violation(tmp_path: Path) -> None:
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/errors.py": "",
        "pkg/paths.py": "from pkg import errors\n",  # within the base layer: allowed
        "pkg/k8s/__init__.py": "",
        "pkg/k8s/pods.py": "from pkg.errors import UsageError\n",
        "pkg/k8s/nodes.py": "def later() -> None:\n    from pkg.plugin.session import stash\n",
        "pkg/plugin/__init__.py": "",
        "pkg/plugin/session.py": "from pkg.k8s import pods\nfrom pkg.extra import x\n",
        "pkg/extra.py": "",
        "pkg/cases/__init__.py": "",
        "pkg/cases/test_x.py": "from pkg.k8s import pods\n",
    })
    graph = ImportGraph([tmp_path])
    order = (("pkg.errors", "pkg.paths"), ("pkg.k8s",), ("pkg.plugin",))
    assert graph.layer_violations(order, outside=("pkg.cases",)) == [
        "pkg.extra  (in no layer)",
        "pkg.k8s.nodes -> pkg.plugin.session  (pkg.plugin is above pkg.k8s)",
        "pkg.plugin.session -> pkg.extra  (pkg.extra is in no layer)",
    ]
    assert graph.cycles() == []  # a layer violation needs no cycle to be found


def test_the_checker_lists_imports_of_computed_names(tmp_path: Path) -> None:
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/loader.py": "import importlib\n\ndef load(name: str) -> None:\n    importlib.import_module(name)\n",
        "pkg/cli.py": "import importlib\nimportlib.import_module('pkg.loader')\n__import__(f'pkg.{1}')\n",
    })
    graph = ImportGraph([tmp_path])
    assert graph.dynamic_imports() == {"pkg.loader": [4], "pkg.cli": [3]}
    assert "pkg.loader" in graph.edges["pkg.cli"]  # a literal name is an edge


def test_the_walk_sees_every_form_of_import() -> None:
    source = (
        "import importlib\n"
        "import winsuite.policy.plan as plan\n"
        "from winsuite import cli\n"
        "from ..k8s import pods\n"
        "from . import helpers\n"
        "importlib.import_module('winsuite.commands.run')\n"
        "def later() -> None:\n"
        "    from winsuite.plugin import wiring\n"
    )
    names = set(imported_names(ast.parse(source), "winsuite.cases.windows"))
    assert names == {
        "importlib", "winsuite.policy.plan", "winsuite", "winsuite.cli", "winsuite.cases.k8s",
        "winsuite.cases.k8s.pods", "winsuite.cases.windows", "winsuite.cases.windows.helpers",
        "winsuite.commands.run", "winsuite.plugin", "winsuite.plugin.wiring",
    }
