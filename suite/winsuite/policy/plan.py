"""The KEP-116 testing plan as data (winsuite/plan/*.yaml): tiers, items, and the tests or exclusions covering each."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from winsuite.errors import DataError
from winsuite.inputs import strict_yaml
from winsuite.paths import plan_dir

TIERS = ("adapted", "substitute", "windows-specific", "api-compatibility", "will-never-work")
_ITEM_KEYS = ("id", "title", "source", "tests", "exclusions")
_SOURCE_KEYS = ("seed", "section", "upstream")


@dataclasses.dataclass(frozen=True)
class Item:
    id: str
    tier: str
    title: str
    source: dict[str, str]
    tests: tuple[str, ...] = ()
    exclusions: tuple[str, ...] = ()
    file: str = ""

    @property
    def source_text(self) -> str:
        if "upstream" in self.source:
            return f"upstream {self.source['upstream']}"
        return f"{self.source['seed']} § {self.source['section']}"


@dataclasses.dataclass(frozen=True)
class Plan:
    items: tuple[Item, ...]

    def items_of_test(self, full_name: str) -> list[Item]:
        return [i for i in self.items if full_name in i.tests]


def _strings(value: Any, path: Path, field: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(path, field, "expected a list of strings")
    return tuple(value)


def _item(raw: Any, tier: str, path: Path, index: int) -> Item:
    where = f"items[{index}]"
    if not isinstance(raw, dict):
        raise DataError(path, where, "expected a mapping with id, title and source")
    unknown = sorted(set(raw) - set(_ITEM_KEYS))
    if unknown:
        raise DataError(path, f"{where}.{unknown[0]}", f"unknown key; known keys: {', '.join(_ITEM_KEYS)}")
    for key in ("id", "title"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise DataError(path, f"{where}.{key}", "required (a non-empty string)")
    source = raw.get("source")
    if not isinstance(source, dict) or not set(source) <= set(_SOURCE_KEYS) or not (
        {"seed", "section"} <= set(source) or "upstream" in source
    ):
        raise DataError(path, f"{where}.source", "expected {seed: <file>, section: <heading>} or {upstream: <path>}")
    return Item(
        id=raw["id"], tier=tier, title=raw["title"], source={k: str(v) for k, v in source.items()},
        tests=_strings(raw.get("tests"), path, f"{where}.tests"),
        exclusions=_strings(raw.get("exclusions"), path, f"{where}.exclusions"),
        file=str(path),
    )


def read_plan_file(path: Path) -> list[Item]:
    raw = strict_yaml.read(path, "plan file")
    if not isinstance(raw, dict) or raw.get("tier") not in TIERS:
        raise DataError(path, "tier", f"expected one of {', '.join(TIERS)}")
    items = raw.get("items")
    if not isinstance(items, list):
        raise DataError(path, "items", "expected a list of items")
    return [_item(entry, raw["tier"], path, i) for i, entry in enumerate(items)]


@functools.cache
def load_plan(directory: Path | None = None) -> Plan:
    items: list[Item] = []
    for path in sorted((directory or plan_dir()).glob("*.yaml")):
        items += read_plan_file(path)
    seen: dict[str, str] = {}
    for item in items:
        if item.id in seen:
            raise DataError(item.file, item.id, f"duplicate item id (also in {seen[item.id]})")
        seen[item.id] = item.file
    return Plan(tuple(sorted(items, key=lambda i: (TIERS.index(i.tier), i.file))))


@dataclasses.dataclass(frozen=True)
class Coverage:
    item: Item
    tests: tuple[str, ...]  # listed tests that exist in the catalog
    exclusions: tuple[str, ...]  # listed exclusions that exist
    unknown: tuple[str, ...]  # listed tests or exclusion ids that do not exist (a plan error)

    @property
    def covered(self) -> bool:
        return bool(self.tests or self.exclusions)


def coverage(plan: Plan, test_names: Iterable[str], exclusion_ids: Iterable[str]) -> list[Coverage]:
    names, ids = set(test_names), set(exclusion_ids)
    return [
        Coverage(
            item=item,
            tests=tuple(t for t in item.tests if t in names),
            exclusions=tuple(e for e in item.exclusions if e in ids),
            unknown=tuple(t for t in item.tests if t not in names) + tuple(e for e in item.exclusions if e not in ids),
        )
        for item in plan.items
    ]
