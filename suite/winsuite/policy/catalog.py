"""The test catalog: winsuite's tests (read without running pytest) and upstream e2e.test specs, with engines."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

from winsuite.authoring.naming import Spec
from winsuite.authoring.naming import Tag
from winsuite.authoring.naming import specs_of_function
from winsuite.errors import UsageError
from winsuite.inputs.engines import Engine
from winsuite.paths import CASES_PACKAGE
from winsuite.policy.selection import is_serial
from winsuite_reports.conventions import tags_in_name

# suite/winsuite/cases/<directory> -> the plan tier its tests belong to by default.
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


def _specs_of(module: ModuleType) -> list[Entry]:
    entries = []
    for name, fn in inspect.getmembers(module, inspect.isfunction):
        if not name.startswith("test") or fn.__module__ != module.__name__:
            continue
        entries += [Entry(spec, module.__name__, name, param) for spec, param in specs_of_function(fn)]
    return entries


def import_package(package: str) -> ModuleType:
    """Import a test package the way `python -m pytest --pyargs` finds it: installed, or under the cwd."""
    if str(Path.cwd()) not in sys.path:
        sys.path.append(str(Path.cwd()))
    try:
        return importlib.import_module(package)
    except ModuleNotFoundError as err:
        raise UsageError(f"cannot import the test package {package!r} ({err}); give an installed package "
                         "or one under the current directory") from None


def collect(package: str = CASES_PACKAGE) -> list[Entry]:
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


def tags_of_name(full_name: str) -> tuple[Tag, ...]:
    """An upstream spec's tags, as its name renders them (`[sig-node]`, `[Serial]`, `[Feature:X]` …)."""
    return tuple(Tag(value) for value in tags_in_name(full_name))


@dataclasses.dataclass(frozen=True)
class CatalogTest:
    """One test of a run's catalog and the engine that runs it."""

    name: str
    tags: tuple[Tag, ...]
    engine: Engine
    native: Entry | None = None  # the winsuite test, for the native engine

    @property
    def serial(self) -> bool:
        return is_serial(self.tags)


def engine_catalog(natives: list[Entry], upstream: list[str], engine: str) -> list[CatalogTest]:
    """The tests of a run for the job's `engine`: natives first, then upstream specs in e2e.test's order.

    auto: every native test, and the upstream specs without a native port; native: the native tests only;
    upstream: every upstream spec; both: every native test and every upstream spec (a port runs twice).
    """
    native_tests = [CatalogTest(e.spec.full_name, e.spec.tags, Engine.NATIVE, e) for e in natives]
    ported = {e.spec.full_name for e in natives}
    upstream_tests = [CatalogTest(name, tags_of_name(name), Engine.UPSTREAM) for name in dict.fromkeys(upstream)]
    if engine == "native":
        return native_tests
    if engine == "upstream":
        return upstream_tests
    if engine == "both":
        return native_tests + upstream_tests
    return native_tests + [t for t in upstream_tests if t.name not in ported]
