"""Dependencies point one way (STYLE §3): the layout's rules hold over transitive imports, and no module cycles.

The layers, bottom up: authoring (what cases import) and k8s; cluster; policy; plugin; run; commands and cli.
`winsuite_reports` reads stored results and never imports winsuite.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.import_graph import ImportGraph
from tests.tools.import_graph import Rule
from tests.tools.import_graph import imported_names

ROOT = Path(__file__).resolve().parents[2]
ROOTS = {"winsuite": ROOT / "suite", "winsuite_reports": ROOT / "reports"}
# The controller side of the run package; its results protocol (winsuite.results) sits below the plugin.
CONTROLLER = ("winsuite.run.runner", "winsuite.run.engines", "winsuite.run.progress", "winsuite.run.summary",
              "winsuite.run.dashboard")

RULES = [
    Rule("winsuite_reports", forbidden=("winsuite",), why="reports read stored results only"),
    Rule("winsuite.cases", allowed_only=("winsuite.authoring", "winsuite.k8s"),
         why="cases import the authoring vocabulary and the Kubernetes helpers only"),
    Rule("winsuite.cases", forbidden=("winsuite.run", "winsuite.plugin", "winsuite.commands", "winsuite.cli"),
         why="cases never reach the runner, the plugin or the CLI"),
    Rule("winsuite.authoring", forbidden=("winsuite.policy", "winsuite.plugin", "winsuite.run", "winsuite.commands",
                                          "winsuite.cluster", "winsuite.cli"),
         why="authoring is the bottom layer"),
    Rule("winsuite.k8s", forbidden=("winsuite.policy", "winsuite.plugin", "winsuite.run", "winsuite.commands",
                                    "winsuite.cli"), why="helpers know Kubernetes, not runs"),
    Rule("winsuite.cluster.discovery", forbidden=("winsuite.policy",), why="discovery is given what it needs"),
    Rule("winsuite.policy", forbidden=("winsuite.run", "winsuite.plugin", "winsuite.commands", "winsuite.cli"),
         why="policy decides, it never runs"),
    Rule("winsuite.plugin", forbidden=(*CONTROLLER, "winsuite.commands", "winsuite.cli"),
         why="the pytest side reaches the results protocol, never the controller"),
    Rule("winsuite.results", forbidden=(*CONTROLLER, "winsuite.plugin", "winsuite.policy", "winsuite.commands"),
         why="the results protocol and writers depend on nothing above them"),
    Rule("winsuite.run", forbidden=("winsuite.commands", "winsuite.cli"), why="the runner never reaches the CLI"),
]


@pytest.fixture(scope="module")
def graph() -> ImportGraph:
    return ImportGraph(ROOTS)


@pytest.mark.parametrize("rule", RULES, ids=[f"{r.source}-{i}" for i, r in enumerate(RULES)])
def test_the_layout_rules_hold(graph: ImportGraph, rule: Rule) -> None:
    assert sum(1 for m in graph.files if m == rule.source or m.startswith(rule.source + ".")) >= 1
    assert graph.violations(rule) == []


def test_no_module_import_cycles(graph: ImportGraph) -> None:
    assert graph.cycles() == []


def test_the_graph_sees_the_whole_project(graph: ImportGraph) -> None:
    assert len(graph.files) > 150
    assert "winsuite.run.runner" in graph.edges["winsuite.commands.run"]


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
    graph = ImportGraph({"pkg": tmp_path / "pkg"})
    assert graph.cycles() == [["pkg.policy.images", "pkg.policy.jobs"]]
    back_edge = graph.violations(Rule("pkg.policy", forbidden=("pkg.run",)))
    assert back_edge == ["pkg.policy.plan -> pkg.helpers -> pkg.run.runner  (forbidden)"]
    assert graph.violations(Rule("pkg.run", forbidden=("pkg.policy",))) == []  # TYPE_CHECKING is no edge
    only = graph.violations(Rule("pkg.cases", allowed_only=("pkg.authoring",)))
    assert only == ["pkg.cases.test_x -> pkg.helpers  (only pkg.authoring allowed)"]


def test_the_walk_sees_every_form_of_import() -> None:
    import ast

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
