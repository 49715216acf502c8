"""The test catalog: every winsuite test under suite/cases, read without running pytest."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
from types import ModuleType

from suite import cases
from suite.naming import Spec
from suite.naming import specs_of_function

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


def collect() -> list[Entry]:
    """Every spec of suite.cases, in module then source order."""
    entries: list[Entry] = []
    for info in pkgutil.walk_packages(cases.__path__, prefix=cases.__name__ + "."):
        if info.ispkg or not info.name.rsplit(".", 1)[1].startswith("test_"):
            continue
        entries += _specs_of(importlib.import_module(info.name))
    return sorted(entries, key=lambda e: (e.module, e.spec.line))
