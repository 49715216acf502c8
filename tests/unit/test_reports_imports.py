"""Data flows one way: `reports` reads stored results and never imports the `suite` plugin."""

from __future__ import annotations

import ast
from pathlib import Path

import reports

PACKAGE = Path(reports.__file__).parent


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
            names.update(
                arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            )
    return names


def test_reports_never_imports_suite() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 10
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(
            name for name in imported_modules(path) if name.split(".")[0] == "suite"
        )
        for path in modules
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_check_sees_a_suite_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import importlib\nfrom suite.plan import load_plan\nimportlib.import_module('suite.cli')\n"
    )
    assert imported_modules(sample) == {"importlib", "suite.plan", "suite.cli"}
