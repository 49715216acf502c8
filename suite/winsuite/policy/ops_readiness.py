"""windows-operational-readiness specifications, read as upstream's `op-readiness` reads them:
`specifications/<name>/spec.yaml`, each a category of test cases selecting upstream specs by ginkgo focus and skip.

    category: Core.Network
    testCases:
      - description: Ability to access Windows container IP by pod IP
        focus: ["\\[sig-network\\] Networking Granular Checks: Pods should function for intra-pod"]
        skip: ['']
        kubernetesVersions: ["v1.36"]
        skipProviders: ["aws"]

A specification whose `testCases` is empty, null or all commented out is a category with no test cases (upstream
logs "No Operational Readiness tests to run" and goes on). A case's focus values are joined with `|`, as are its
skip values, and handed to ginkgo, which ignores an empty joined value: `skip: ['']` skips nothing. Each case selects
from the whole catalog (winsuite's tests and the upstream names); a case that selects nothing is reported as such,
never dropped.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.given_paths import Found
from winsuite.given_paths import probe
from winsuite.given_paths import shown
from winsuite.given_paths import unreadable
from winsuite.inputs import strict_yaml
from winsuite.inputs.regex import RegexError
from winsuite.inputs.regex import compile_re2
from winsuite.policy.selection import Selector
from winsuite.versions import in_range

SPEC_FILE = "spec.yaml"
NO_CASES = "no test cases in this specification"
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

    @functools.cached_property
    def _selector(self) -> Selector:
        # op-readiness always passes --ginkgo.focus, so e2e.test's default skip never applies.
        return Selector(self.focus, self.skip, apply_default_skip=False)

    def selects(self, name: str) -> bool:
        """ginkgo's --focus/--skip (each list joined with '|') on the full name, as e2e.test applies them."""
        return self._selector.selects(name)

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
class OpsSpecification:
    """One spec.yaml: a category and its test cases (none, for a category whose cases are all commented out)."""

    category: str
    source: str  # the file
    cases: tuple[OpsCase, ...]


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
        kind = probe(path, "specification (--ops-readiness)")
        if kind is Found.DIRECTORY:
            try:
                specs = sorted(path.rglob(SPEC_FILE))
            except OSError as err:  # a directory under it that cannot be listed
                raise unreadable("specifications (--ops-readiness)", err.filename or path, err) from None
            if not specs:
                raise UsageError(f"--ops-readiness {shown(given)}: no {SPEC_FILE} under this directory")
            found += specs
        elif kind is Found.MISSING:
            raise UsageError(f"--ops-readiness {shown(given)}: no such file or directory")
        else:
            found.append(path)  # a file, or what the reader refuses in one line (a FIFO, a device)
    return found


def load_specifications(paths: Iterable[str], categories: Sequence[str] = ()) -> list[OpsSpecification]:
    """Every specification (of the given categories, as op-readiness' repeatable --category; none: all)."""
    specs = [_read_spec(path) for path in spec_files(paths)]
    if categories:
        known = sorted({s.category for s in specs})
        unknown = [c for c in dict.fromkeys(categories) if c not in known]
        if unknown:
            raise UsageError(f"--category {', '.join(unknown)}: no specification of that category (categories: "
                             f"{', '.join(known) or 'none'})")
        specs = [s for s in specs if s.category in categories]
    return specs


def cases_of(specs: Iterable[OpsSpecification]) -> list[OpsCase]:
    return [case for spec in specs for case in spec.cases]


def select(cases: list[OpsCase], names: Iterable[str], *, kubernetes_version: str | None = None,
           provider: str | None = None) -> list[CaseSelection]:
    every = sorted(set(names))
    return [CaseSelection(case, [n for n in every if case.selects(n)],
                          case.not_applicable(kubernetes_version, provider)) for case in cases]


def _read_spec(path: Path) -> OpsSpecification:
    source = str(path)
    raw = strict_yaml.read(path, "specification")
    if not isinstance(raw, dict):
        raise DataError(source, "", "expected a mapping with category and testCases")
    _known_keys(raw, source, "", _TOP_KEYS)
    category = raw.get("category")
    if not isinstance(category, str) or not category.strip():
        raise DataError(source, "category", "required: a non-empty string (e.g. Core.Network)")
    test_cases = raw.get("testCases")
    if test_cases is None:  # `testCases:` with every case commented out, or left out: a category with no cases
        test_cases = []
    if not isinstance(test_cases, list):
        raise DataError(source, "testCases", f"expected a list of test cases, got {type(test_cases).__name__}")
    cases = tuple(_case(item, source, f"testCases[{i}]", category) for i, item in enumerate(test_cases))
    return OpsSpecification(category, source, cases)


def _case(raw: Any, source: str, field: str, category: str) -> OpsCase:
    if not isinstance(raw, dict):
        raise DataError(source, field, "expected a mapping with description, focus, skip, …")
    _known_keys(raw, source, field, _CASE_KEYS)
    description = raw.get("description")
    if not isinstance(description, str) or not description.strip():
        raise DataError(source, f"{field}.description", "required: a non-empty string")
    focus = _regexes(raw.get("focus"), source, f"{field}.focus")
    if not "|".join(focus):  # upstream's validation: "Focus Required"
        raise DataError(source, f"{field}.focus", "required: at least one non-empty regex (a case without focus "
                                                  "runs all)")
    return OpsCase(category, description.strip(), focus,
                   _regexes(raw.get("skip"), source, f"{field}.skip"),
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
