"""Dependencies point one way (STYLE §3), checked by walking every module's imports with `ast`.

- `reports` reads stored results and never imports `suite`;
- the tests in `suite/cases` never import the runner or the CLI;
- the Kubernetes helpers in `suite/k8s` never import the pytest plugin.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# (package directory, modules it must not import, each with its submodules)
RULES: list[tuple[str, tuple[str, ...]]] = [
    ("reports", ("suite",)),
    ("suite/cases", ("winsuite.run.runner", "winsuite.cli", "winsuite.commands")),
    ("suite/k8s", ("winsuite.plugin.wiring",)),
]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, root: Path = ROOT) -> set[str]:
    """Every module `path` imports: plain and from-imports (relative ones resolved), and import_module('x')."""
    own = module_name(path, root)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module", "__import__"
        ):
            names.update(a.value for a in node.args[:1] if isinstance(a, ast.Constant) and isinstance(a.value, str))
    return names


def violates(name: str, forbidden: tuple[str, ...]) -> bool:
    return any(name == f or name.startswith(f + ".") for f in forbidden)


@pytest.mark.parametrize(("directory", "forbidden"), RULES, ids=[r[0] for r in RULES])
def test_dependency_direction(directory: str, forbidden: tuple[str, ...]) -> None:
    modules = sorted((ROOT / directory).rglob("*.py"))
    assert len(modules) > 5, f"{directory} looks empty: is the rule still pointing at the right place?"
    offenders = {
        str(path.relative_to(ROOT)): sorted(n for n in imported_modules(path) if violates(n, forbidden))
        for path in modules
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_walk_sees_every_form_of_import(tmp_path: Path) -> None:
    package = tmp_path / "suite" / "cases" / "windows"
    package.mkdir(parents=True)
    sample = package / "test_x.py"
    sample.write_text(
        "import importlib\n"
        "import suite.plan as plan\n"
        "from suite import runner\n"
        "from ..k8s import pods\n"
        "from ... import cli\n"
        "from . import helpers\n"
        "importlib.import_module('winsuite.commands.run')\n"
        "def later() -> None:\n"
        "    from suite.plugin import thing\n"
    )
    assert imported_modules(sample, tmp_path) == {
        "importlib", "winsuite.policy.plan", "suite", "winsuite.run.runner", "winsuite.cases.k8s", "winsuite.cases.k8s.pods",
        "winsuite.cli", "winsuite.cases.windows", "winsuite.cases.windows.helpers", "winsuite.commands.run", "winsuite.plugin.wiring",
        "winsuite.plugin.wiring.thing",
    }
    assert violates("winsuite.run.runner", ("winsuite.run.runner",)) and violates("winsuite.commands.run", ("winsuite.commands",))
    assert not violates("winsuite.runners", ("winsuite.run.runner",))
