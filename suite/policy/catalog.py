"""The test catalog: every winsuite test of a package (suite/cases by default), read without running pytest."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

from winsuite.authoring.naming import Spec
from winsuite.authoring.naming import specs_of_function
from winsuite.errors import UsageError

# suite/cases/<directory> -> the plan tier its tests belong to by default.
DIRECTORY_TIERS = {"adapted": "adapted", "substitute": "substitute", "windows": "windows-specific"}


@dataclasses.dataclass(frozen=True)
class Entry:
    spec: Spec
    module: str
    function: str
    param: str | None = None  # the it_each entry

    @property
    def nodeid(self) -> str:
        """The pytest node id with the project root as rootdir (how `winsuite run` invokes pytest)."""
        return self.module.replace(".", "/") + ".py::" + self.function + (f"[{self.param}]" if self.param else "")

    @property
    def directory_tier(self) -> str:
        return DIRECTORY_TIERS.get(self.module.split(".")[2], "") if self.module.count(".") >= 3 else ""


def _specs_of(module: ModuleType) -> list[Entry]:
    entries = []
    for name, fn in inspect.getmembers(module, inspect.isfunction):
        if not name.startswith("test") or fn.__module__ != module.__name__:
            continue
        entries += [Entry(spec, module.__name__, name, param) for spec, param in specs_of_function(fn)]
    return entries


DEFAULT_PACKAGE = "winsuite.cases"


def import_package(package: str) -> ModuleType:
    """Import a test package the way `python -m pytest --pyargs` finds it: installed, or under the cwd."""
    if str(Path.cwd()) not in sys.path:
        sys.path.append(str(Path.cwd()))
    try:
        return importlib.import_module(package)
    except ModuleNotFoundError as err:
        raise UsageError(f"cannot import the test package {package!r} ({err}); give an installed package "
                         "or one under the current directory") from None


def collect(package: str = DEFAULT_PACKAGE) -> list[Entry]:
    """Every spec of a test package (default: winsuite's catalog), in module then source order."""
    root = import_package(package)
    entries: list[Entry] = []
    for info in pkgutil.walk_packages(root.__path__, prefix=root.__name__ + "."):
        if info.ispkg or not info.name.rsplit(".", 1)[1].startswith("test_"):
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception as err:  # a broken test module is named, not a traceback
            raise UsageError(f"cannot import test module {info.name}: {type(err).__name__}: {err}") from err
        entries += _specs_of(module)
    return sorted(entries, key=lambda e: (e.module, e.spec.line))
