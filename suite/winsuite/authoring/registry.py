"""The closed registry of areas, tags and categories (suite/winsuite/registry.yaml), and checks of test specs."""

from __future__ import annotations

import collections
import dataclasses
import functools
from collections.abc import Iterable

import yaml

from winsuite.authoring.naming import Spec
from winsuite.authoring.naming import Tag
from winsuite.errors import DataError
from winsuite.paths import PACKAGE_DIR

REGISTRY_FILE = PACKAGE_DIR / "registry.yaml"


@dataclasses.dataclass(frozen=True)
class Registry:
    areas: frozenset[str]
    tags: dict[str, str]
    families: dict[str, frozenset[str]]
    categories: tuple[str, ...]

    def knows(self, tag: Tag) -> bool:
        if tag.value in self.tags or tag.value in self.areas:
            return True
        family = tag.family
        if family is None:
            return False
        return tag.value.split(":", 1)[1] in self.families.get(family, frozenset())

    def all_tags(self) -> list[Tag]:
        """Every tag the registry allows, areas included (for marker registration)."""
        tags = [Tag(v) for v in sorted(self.areas)] + [Tag(v) for v in self.tags]
        for family, values in sorted(self.families.items()):
            tags += [Tag(f"{family}:{v}") for v in sorted(values)]
        return tags


@functools.cache
def load_registry() -> Registry:
    raw = yaml.safe_load(REGISTRY_FILE.read_text())
    if not isinstance(raw, dict):
        raise DataError(REGISTRY_FILE, "", "expected a mapping")
    return Registry(
        areas=frozenset(raw["areas"]),
        tags={str(k): str(v) for k, v in raw["tags"].items()},
        families={str(k): frozenset(str(x) for x in v) for k, v in raw["families"].items()},
        categories=tuple(raw["categories"]),
    )


def check_specs(specs: Iterable[Spec], registry: Registry | None = None) -> list[str]:
    """Every problem with the given specs, as 'file:line: problem' lines; empty when all is well."""
    registry = registry or load_registry()
    specs = list(specs)
    problems: list[str] = []
    for spec in specs:
        problems += [f"{spec.location}: {p}" for p in _spec_problems(spec, registry)]
    by_name: dict[str, list[Spec]] = collections.defaultdict(list)
    for spec in specs:
        by_name[spec.full_name].append(spec)
    for name, same in sorted(by_name.items()):
        if len(same) > 1:
            where = ", ".join(s.location for s in same)
            problems.append(f"{same[0].location}: duplicate full name {name!r}, declared at {where}")
    return problems


def _spec_problems(spec: Spec, registry: Registry) -> list[str]:
    problems = []
    if spec.area not in registry.areas:
        problems.append(
            f"a test name must start with its area, one of {sorted(registry.areas)}; got {spec.full_name!r}"
        )
    for tag in spec.tags:
        if not registry.knows(tag):
            problems.append(f"unknown tag {tag.render()} in {spec.full_name!r}{_hint(tag, registry)}")
    if spec.twin is not None and spec.twin != spec.full_name:
        problems.append(f"name differs from its upstream twin:\n  winsuite: {spec.full_name}\n  upstream: {spec.twin}")
    if spec.category is not None and spec.category not in registry.categories:
        problems.append(f"unknown KEP-2578 category {spec.category!r}; known: {', '.join(registry.categories)}")
    return problems


def _hint(tag: Tag, registry: Registry) -> str:
    family = tag.family
    if family in registry.families:
        return f"; known {family} values: {', '.join(sorted(registry.families[family]))}"
    return f"; known tags: {', '.join(registry.tags)} and families {', '.join(registry.families)}"
