"""Two builds compared spec by spec (e.g. a run on one's own cluster against an upstream job's build of the same
Kubernetes minor): passed in both, failed in only one, ran in only one, grouped by KEP-2578 category and plan tier,
with each side's environment.

Specs are matched by name; names that differ only in their bracketed tags (upstream renames and moves tags such as
`[Feature:Windows]`, `[NodeConformance]` between releases) are matched by the rest of their text, as one TestGrid
row follows the same `[It]` text, and the comparison lists each such pair.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass

from winsuite_reports.categories import UNCATEGORIZED
from winsuite_reports.environment import recorded_axes
from winsuite_reports.environment import value
from winsuite_reports.job import Job
from winsuite_reports.model import NO_RESULT
from winsuite_reports.model import Build
from winsuite_reports.model import Cell
from winsuite_reports.model import PlanItem
from winsuite_reports.model import RowInfo
from winsuite_reports.model import Status

NO_TIER = "(no tier)"
# A cell as the comparison's page says it.
STATUS_WORDS = {Status.PASS: "passed", Status.FAIL: "failed", Status.FLAKY: "flaky", Status.SKIP: "skipped",
                Status.NO_RESULT: "absent", Status.RUNNING: "running"}
_TAG = re.compile(r"\[[^\[\]]*\]")


class Verdict(enum.Enum):
    """A spec's place in the comparison; the order is the order pages list them in."""

    FAILED_ONLY_IN_A = "failed only in A"
    FAILED_ONLY_IN_B = "failed only in B"
    FAILED_IN_BOTH = "failed in both"
    RAN_ONLY_IN_A = "ran only in A"
    RAN_ONLY_IN_B = "ran only in B"
    PASSED_IN_BOTH = "passed in both"
    RAN_IN_NEITHER = "ran in neither"  # skipped (or absent) on both sides

    @property
    def differs(self) -> bool:
        return self not in (Verdict.PASSED_IN_BOTH, Verdict.RAN_IN_NEITHER)


class _Outcome(enum.Enum):
    PASSED = "passed"  # a flaky spec passed in the end
    FAILED = "failed"
    NOT_RUN = "not run"  # skipped, absent, or still running


def _outcome(status: Status) -> _Outcome:
    if status is Status.FAIL:
        return _Outcome.FAILED
    return _Outcome.PASSED if status in (Status.PASS, Status.FLAKY) else _Outcome.NOT_RUN


def verdict(a: Status, b: Status) -> Verdict:
    """Where a spec with these two cells belongs."""
    first, second = _outcome(a), _outcome(b)
    if first is _Outcome.NOT_RUN or second is _Outcome.NOT_RUN:
        if first is second:
            return Verdict.RAN_IN_NEITHER
        return Verdict.RAN_ONLY_IN_B if first is _Outcome.NOT_RUN else Verdict.RAN_ONLY_IN_A
    if first is second:
        return Verdict.PASSED_IN_BOTH if first is _Outcome.PASSED else Verdict.FAILED_IN_BOTH
    return Verdict.FAILED_ONLY_IN_A if first is _Outcome.FAILED else Verdict.FAILED_ONLY_IN_B


def it_text(name: str) -> str:
    """A spec's name without its bracketed tags, spaces collapsed: what stays when upstream renames a tag."""
    return " ".join(_TAG.sub(" ", name).split())


@dataclass(frozen=True)
class SpecResult:
    name: str  # as side A names it (as side B does when only B has it)
    b_name: str  # B's name when it differs from A's by tags only, else ""
    verdict: Verdict
    a: Cell
    b: Cell


@dataclass(frozen=True)
class Group:
    category: str
    tier: str
    specs: list[SpecResult]

    def of(self, verdict: Verdict) -> list[SpecResult]:
        return [spec for spec in self.specs if spec.verdict is verdict]


@dataclass(frozen=True)
class Side:
    label: str  # what the user named: a build directory or a bucket URL
    job: str
    build: Build


@dataclass(frozen=True)
class Comparison:
    a: Side
    b: Side
    groups: list[Group]
    renamed: list[tuple[str, str]]  # (A's name, B's name) matched by their text, tags apart

    def totals(self) -> dict[Verdict, int]:
        return {v: sum(len(group.of(v)) for group in self.groups) for v in Verdict}

    def environment(self) -> list[tuple[str, str, str]]:
        """(axis, A's value, B's value) for every axis either build records."""
        builds = [self.a.build, self.b.build]
        return [(axis.label, value(self.a.build, axis), value(self.b.build, axis)) for axis in recorded_axes(builds)]


def compare(a: tuple[str, Job], b: tuple[str, Job], plan_items: Sequence[PlanItem] = ()) -> Comparison:
    """Compare the newest build of each side's job (the job of one build, as a build reference reads)."""
    (label_a, job_a), (label_b, job_b) = a, b
    build_a, build_b = job_a.builds[0], job_b.builds[0]
    pairs, renamed = _matched(sorted(build_a.cells), sorted(build_b.cells))
    tiers = _plan_tiers(plan_items)
    grouped: dict[tuple[str, str], list[SpecResult]] = {}
    for name_a, name_b in pairs:
        cell_a = build_a.cells.get(name_a, NO_RESULT) if name_a else NO_RESULT
        cell_b = build_b.cells.get(name_b, NO_RESULT) if name_b else NO_RESULT
        name = name_a or name_b
        info = job_a.rows.get(name_a) or job_b.rows.get(name_b) or RowInfo(name)
        other = job_b.rows.get(name_b) or info
        category = info.category or other.category or UNCATEGORIZED
        tier = info.tier or other.tier or tiers.get(name) or tiers.get(it_text(name)) or NO_TIER
        b_name = name_b if name_a and name_b and name_b != name_a else ""
        spec = SpecResult(name, b_name, verdict(cell_a.status, cell_b.status), cell_a, cell_b)
        grouped.setdefault((category, tier), []).append(spec)
    order = list(dict.fromkeys(tiers.values()))
    groups = [Group(category, tier, sorted(specs, key=lambda s: s.name))
              for (category, tier), specs in sorted(grouped.items(), key=lambda item: _group_key(item[0], order))]
    return Comparison(Side(label_a, job_a.name, build_a), Side(label_b, job_b.name, build_b), groups, renamed)


def _matched(names_a: list[str], names_b: list[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Pairs of (A's name, B's name), "" where a side has none; and the pairs matched by text, tags apart (only
    where that text names one spec on each side: an ambiguous text matches nothing)."""
    in_b = set(names_b)
    pairs = [(name, name) for name in names_a if name in in_b]
    only_a = [name for name in names_a if name not in in_b]
    matched_b = {name for name, _ in pairs}
    only_b = [name for name in names_b if name not in matched_b]
    by_text_a = _unique_by_text(only_a)
    by_text_b = _unique_by_text(only_b)
    renamed = sorted((by_text_a[text], by_text_b[text]) for text in by_text_a.keys() & by_text_b.keys())
    taken_a = {a for a, _ in renamed}
    taken_b = {b for _, b in renamed}
    pairs += renamed
    pairs += [(name, "") for name in only_a if name not in taken_a]
    pairs += [("", name) for name in only_b if name not in taken_b]
    return pairs, renamed


def _unique_by_text(names: list[str]) -> dict[str, str]:
    seen: dict[str, list[str]] = {}
    for name in names:
        seen.setdefault(it_text(name), []).append(name)
    return {text: found[0] for text, found in seen.items() if len(found) == 1}


def _plan_tiers(plan_items: Sequence[PlanItem]) -> Mapping[str, str]:
    """Test name (and its text, tags apart) -> the tier of the first plan item that covers it, in plan order."""
    tiers: dict[str, str] = {}
    for item in plan_items:
        for test in item.tests:
            tiers.setdefault(test, item.tier)
            tiers.setdefault(it_text(test), item.tier)
    return tiers


def _group_key(key: tuple[str, str], tier_order: list[str]) -> tuple[int, str, int, str]:
    category, tier = key
    rank = tier_order.index(tier) if tier in tier_order else len(tier_order) + (tier == NO_TIER)
    return (category == UNCATEGORIZED, category, rank, tier)
