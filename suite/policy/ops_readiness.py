"""windows-operational-readiness specifications, read as they are: `specifications/<name>/spec.yaml`, each a
category of test cases selecting upstream specs by ginkgo focus and skip regexes.

    category: Core.Network
    testCases:
      - description: Ability to access Windows container IP by pod IP
        focus: ["\\[sig-network\\] Networking Granular Checks: Pods should function for intra-pod"]
        skip: []
        kubernetesVersions: ["v1.36"]
        skipProviders: ["aws"]

Each case selects from the whole catalog (winsuite's tests and the upstream names); a case that selects nothing
is reported as such, never dropped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.inputs import strict_yaml
from winsuite.inputs.regex import RegexError
from winsuite.inputs.regex import compile_re2
from winsuite.versions import in_range

SPEC_FILE = "spec.yaml"
_TOP_KEYS = ("category", "testCases")
_CASE_KEYS = ("description", "focus", "skip", "kubernetesVersions", "skipProviders")


@dataclasses.dataclass(frozen=True)
class OpsCase:
    """One test case of a specification."""

    category: str
    description: str
    focus: tuple[str, ...]
    skip: tuple[str, ...]
    kubernetes_versions: tuple[str, ...]
    skip_providers: tuple[str, ...]
    source: str  # file and index, for messages: "specifications/network/spec.yaml: testCases[2]"

    def selects(self, name: str) -> bool:
        """ginkgo's --focus/--skip on the full name: any focus (none: all) and no skip."""
        focused = not self.focus or any(compile_re2(f).search(name) for f in self.focus)
        return focused and not any(compile_re2(s).search(name) for s in self.skip)

    def not_applicable(self, kubernetes_version: str | None, provider: str | None) -> str | None:
        """Why the case does not apply to this cluster, or None."""
        if self.kubernetes_versions and kubernetes_version is not None and not any(
                _is_release(kubernetes_version, wanted) for wanted in self.kubernetes_versions):
            return f"only for Kubernetes {', '.join(self.kubernetes_versions)} (found: {kubernetes_version})"
        if provider and provider in self.skip_providers:
            return f"skipped for provider {provider}"
        return None


def _is_release(kubernetes_version: str, wanted: str) -> bool:
    """The cluster runs the release a case names: "v1.36" is any v1.36.x, "v1.36.3" that one (never an
    unreadable name)."""
    try:
        return in_range(kubernetes_version, wanted)
    except ValueError:
        return False


@dataclasses.dataclass(frozen=True)
class CaseSelection:
    case: OpsCase
    names: list[str]  # the full names it selects, sorted
    not_applicable: str | None


def spec_files(paths: Iterable[str]) -> list[Path]:
    """Spec files given directly, or found under directories (`specifications/*/spec.yaml`, any depth)."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            specs = sorted(path.rglob(SPEC_FILE))
            if not specs:
                raise UsageError(f"--ops-readiness {given}: no {SPEC_FILE} under this directory")
            found += specs
        elif path.is_file():
            found.append(path)
        else:
            raise UsageError(f"--ops-readiness {given}: no such file or directory")
    return found


def load_cases(paths: Iterable[str], category: str | None = None) -> list[OpsCase]:
    """Every test case of the specifications (of one category when given)."""
    cases = [case for path in spec_files(paths) for case in _read_spec(path)]
    if category is not None:
        known = sorted({c.category for c in cases})
        cases = [c for c in cases if c.category == category]
        if not cases:
            raise UsageError(f"--category {category}: no test case of that category (categories: "
                             f"{', '.join(known) or 'none'})")
    return cases


def select(cases: list[OpsCase], names: Iterable[str], *, kubernetes_version: str | None = None,
           provider: str | None = None) -> list[CaseSelection]:
    every = sorted(set(names))
    return [CaseSelection(case, [n for n in every if case.selects(n)],
                          case.not_applicable(kubernetes_version, provider)) for case in cases]


def _read_spec(path: Path) -> list[OpsCase]:
    source = str(path)
    raw = strict_yaml.read(path, "specification")
    if not isinstance(raw, dict):
        raise DataError(source, "", "expected a mapping with category and testCases")
    _known_keys(raw, source, "", _TOP_KEYS)
    category = raw.get("category")
    if not isinstance(category, str) or not category.strip():
        raise DataError(source, "category", "required: a non-empty string (e.g. Core.Network)")
    test_cases = raw.get("testCases")
    if not isinstance(test_cases, list) or not test_cases:
        raise DataError(source, "testCases", "required: a non-empty list of test cases")
    return [_case(item, source, f"testCases[{i}]", category) for i, item in enumerate(test_cases)]


def _case(raw: Any, source: str, field: str, category: str) -> OpsCase:
    if not isinstance(raw, dict):
        raise DataError(source, field, "expected a mapping with description, focus, skip, …")
    _known_keys(raw, source, field, _CASE_KEYS)
    description = raw.get("description")
    if not isinstance(description, str) or not description.strip():
        raise DataError(source, f"{field}.description", "required: a non-empty string")
    focus = _regexes(raw.get("focus"), source, f"{field}.focus")
    if not focus:
        raise DataError(source, f"{field}.focus", "required: at least one regex (a case without focus runs all)")
    return OpsCase(category, description.strip(), focus, _regexes(raw.get("skip"), source, f"{field}.skip"),
                   _strings(raw.get("kubernetesVersions"), source, f"{field}.kubernetesVersions"),
                   _strings(raw.get("skipProviders"), source, f"{field}.skipProviders"),
                   f"{source}: {field}")


def _known_keys(raw: dict[Any, Any], source: str, field: str, allowed: tuple[str, ...]) -> None:
    for key in raw:
        if key not in allowed:
            where = f"{field}.{key}" if field else str(key)
            raise DataError(source, where, f"unknown field (allowed: {', '.join(allowed)})")


def _strings(value: Any, source: str, field: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(source, field, "expected a list of strings")
    return tuple(value)


def _regexes(value: Any, source: str, field: str) -> tuple[str, ...]:
    patterns = _strings(value, source, field)
    for i, pattern in enumerate(patterns):
        try:
            compile_re2(pattern)
        except RegexError as err:
            raise DataError(source, f"{field}[{i}]", f"not a Go regex: {err}") from err
    return patterns
