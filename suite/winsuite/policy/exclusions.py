"""Exclusion lists (jobs/exclusions/*.yaml): tests known not to work, each with reason, issue, expiry, scope."""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from winsuite import versions
from winsuite.authoring.facts import ClusterFacts
from winsuite.errors import DataError
from winsuite.errors import shown
from winsuite.inputs import strict_yaml
from winsuite.inputs.regex import RegexError
from winsuite.inputs.regex import compile_re2

API_VERSION = "winsuite.io/v1alpha1"
KIND = "ExclusionList"
_ENTRY_KEYS = ("id", "pattern", "name", "reason", "issue", "expires", "scope")
# The list dimensions of a scope: YAML key -> Scope field.
_SCOPE_LISTS = {"nodeOS": "node_os", "windowsBuilds": "windows_builds", "cni": "cni",
                "containerRuntimes": "container_runtimes"}
_SCOPE_KEYS = ("nodeOS", "kubernetes", "windowsBuilds", "cni", "containerRuntimes")


@dataclasses.dataclass(frozen=True)
class ScopeFacts:
    """What a run knows about its cluster; None means unknown (a scope that needs it does not match)."""

    kubernetes_version: str | None = None
    windows_builds: frozenset[str] | None = None
    cni: str | None = None
    container_runtimes: frozenset[str] | None = None
    node_os: str | None = None  # the run's target OS

    @staticmethod
    def of_cluster(facts: ClusterFacts) -> ScopeFacts:
        """What exclusion scopes can see of a discovered cluster (runtimes of the real nodes, if any)."""
        return ScopeFacts(
            kubernetes_version=facts.server_version,
            windows_builds=frozenset(facts.windows_builds()),
            container_runtimes=frozenset(n.container_runtime for n in facts.nodes if not n.simulated)
            or frozenset(n.container_runtime for n in facts.nodes),
        )


@dataclasses.dataclass(frozen=True)
class Scope:
    kubernetes: str | None = None
    windows_builds: tuple[str, ...] = ()
    cni: tuple[str, ...] = ()
    container_runtimes: tuple[str, ...] = ()
    node_os: tuple[str, ...] = ()

    @property
    def unscoped(self) -> bool:
        return not (self.kubernetes or self.windows_builds or self.cni or self.container_runtimes or self.node_os)

    def applies(self, facts: ScopeFacts | None) -> bool:
        """True when every scope dimension is known and matches; an unknown fact never matches."""
        if self.unscoped:
            return True
        facts = facts or ScopeFacts()
        checks = [
            self.kubernetes is None
            or (facts.kubernetes_version is not None and versions.in_range(facts.kubernetes_version, self.kubernetes)),
            not self.windows_builds
            or (facts.windows_builds is not None and bool(set(self.windows_builds) & facts.windows_builds)),
            not self.cni or (facts.cni is not None and facts.cni in self.cni),
            not self.node_os or (facts.node_os is not None and facts.node_os in self.node_os),
            not self.container_runtimes
            or (facts.container_runtimes is not None
                and any(r.startswith(p) for r in facts.container_runtimes for p in self.container_runtimes)),
        ]
        return all(checks)

    def describe(self) -> str:
        parts = [f"kubernetes {self.kubernetes}"] if self.kubernetes else []
        parts += [f"{label} {', '.join(values)}" for label, values in (
            ("target OS", self.node_os), ("Windows builds", self.windows_builds), ("CNI", self.cni),
            ("runtimes", self.container_runtimes))
            if values]
        return "; ".join(parts)


@dataclasses.dataclass(frozen=True)
class Exclusion:
    source: str  # file#index, for messages
    reason: str
    issue: str
    pattern: str | None = None  # RE2, matched anywhere in the full name (like --skip)
    name: str | None = None  # an exact full name
    id: str | None = None
    expires: datetime.date | None = None
    scope: Scope = Scope()
    problem: str | None = None  # set when the entry is unusable (kept for lint)

    def matches(self, full_name: str) -> bool:
        if self.problem is not None:
            return False
        if self.name is not None:
            return full_name == self.name
        assert self.pattern is not None
        return compile_re2(self.pattern).matches(full_name)

    def expired(self, today: datetime.date) -> bool:
        return self.expires is not None and self.expires < today

    def applies(self, facts: ScopeFacts | None, today: datetime.date) -> bool:
        return not self.expired(today) and self.scope.applies(facts)

    def skip_reason(self) -> str:
        return f"excluded: {self.reason} ({self.issue})"

    @property
    def label(self) -> str:
        return self.id or self.name or self.pattern or self.source


def _entry(raw: Any, source: str, file_scope: Scope) -> Exclusion:
    if not isinstance(raw, dict):
        raise DataError(source, "", "each exclusion is a mapping with pattern or name, reason and issue")
    unknown = sorted(str(key) for key in set(raw) - set(_ENTRY_KEYS))
    if unknown:
        raise DataError(source, unknown[0], f"unknown key; known keys: {', '.join(_ENTRY_KEYS)}")
    if ("pattern" in raw) == ("name" in raw):
        raise DataError(source, "pattern/name", "give exactly one of pattern (a regex) or name (an exact test name)")
    for key in ("reason", "issue"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise DataError(source, key, "required (a non-empty string)")
    for key in ("pattern", "name", "id"):
        if key in raw and (not isinstance(raw[key], str) or not raw[key].strip()):
            raise DataError(source, key, "expected a non-empty string")
    expires = raw.get("expires")
    if expires is not None and not isinstance(expires, datetime.date):
        raise DataError(source, "expires", f"expected a date like 2027-01-31, got {shown(expires)}")
    entry = Exclusion(
        source=source, reason=raw["reason"].strip(), issue=raw["issue"].strip(),
        pattern=raw.get("pattern"), name=raw.get("name"), id=raw.get("id"),
        expires=expires, scope=_scope(raw.get("scope"), source, inherited=file_scope),
    )
    if entry.pattern is not None:
        try:
            compile_re2(entry.pattern)
        except RegexError as err:
            return dataclasses.replace(entry, problem=f"pattern {entry.pattern!r}: {err.problem}")
    return entry


def _scope(raw: Any, source: str, inherited: Scope = Scope()) -> Scope:
    """A scope; dimensions it leaves out come from `inherited` (for an entry, the file's scope)."""
    if raw is None:
        return inherited
    if not isinstance(raw, dict) or set(raw) - set(_SCOPE_KEYS):
        raise DataError(source, "scope", f"expected a mapping with keys among {', '.join(_SCOPE_KEYS)}")
    given: dict[str, Any] = {}
    if raw.get("kubernetes") is not None:
        given["kubernetes"] = str(raw["kubernetes"])
        try:
            versions.in_range("v1.0.0", given["kubernetes"])
        except ValueError:
            raise DataError(source, "scope.kubernetes",
                            f"invalid version range {shown(raw['kubernetes'])}; use e.g. '>=1.31, <1.37'") from None
    for key, field in _SCOPE_LISTS.items():
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise DataError(source, f"scope.{key}", "expected a list of strings")
        given[field] = tuple(value)
    return dataclasses.replace(inherited, **given)


def read_exclusion_file(path: Path) -> list[Exclusion]:
    """All entries of one file; entries with an invalid regex carry `.problem` instead of failing."""
    raw = strict_yaml.read(path, "exclusion list")
    if not isinstance(raw, dict) or raw.get("apiVersion") != API_VERSION or raw.get("kind") != KIND:
        raise DataError(path, "apiVersion/kind", f"expected apiVersion: {API_VERSION} and kind: {KIND}")
    unknown = sorted(str(key) for key in set(raw) - {"apiVersion", "kind", "scope", "exclusions"})
    if unknown:
        raise DataError(path, unknown[0], "unknown key; known keys: apiVersion, kind, scope, exclusions")
    entries = raw.get("exclusions")
    if not isinstance(entries, list):
        raise DataError(path, "exclusions", "expected a list of entries")
    file_scope = _scope(raw.get("scope"), str(path))
    return [_entry(e, f"{path}#exclusions[{i}]", file_scope) for i, e in enumerate(entries)]


def load_exclusions(paths: Iterable[str | Path]) -> tuple[Exclusion, ...]:
    """Entries of every file, for a run: an unusable entry is an error, not a silent gap."""
    entries: list[Exclusion] = []
    for path in paths:
        entries += read_exclusion_file(Path(path))
    for entry in entries:
        if entry.problem is not None:
            raise DataError(entry.source, "pattern", entry.problem)
    return tuple(entries)


def lint(entries: Iterable[Exclusion], known_names: Iterable[str], today: datetime.date) -> list[str]:
    """Expired entries, invalid regexes, duplicate ids and entries that match no known test."""
    names = list(known_names)
    problems = []
    seen_ids: dict[str, str] = {}
    for entry in entries:
        if entry.problem is not None:
            problems.append(f"{entry.source}: invalid regex: {entry.problem}")
            continue
        if entry.expired(today):
            problems.append(f"{entry.source}: expired on {entry.expires} ({entry.label})")
        if entry.id is not None:
            if entry.id in seen_ids:
                problems.append(f"{entry.source}: duplicate id {entry.id!r} (first at {seen_ids[entry.id]})")
            seen_ids.setdefault(entry.id, entry.source)
        if not any(entry.matches(n) for n in names):
            problems.append(f"{entry.source}: matches no known test ({entry.label})")
    return problems
