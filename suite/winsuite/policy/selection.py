"""Which tests a run selects: ginkgo focus/skip semantics, [LinuxOnly], exclusion lists."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import functools
from collections.abc import Iterable
from collections.abc import Sequence

from winsuite.authoring.naming import Disruptive
from winsuite.authoring.naming import LinuxOnly
from winsuite.authoring.naming import Serial
from winsuite.authoring.naming import Tag
from winsuite.authoring.targeting import NodeOS
from winsuite.errors import UsageError
from winsuite.inputs.label_filter import Filter
from winsuite.inputs.label_filter import parse_label_filter
from winsuite.inputs.regex import Alternatives
from winsuite.inputs.regex import GoRegex
from winsuite.inputs.regex import RegexError
from winsuite.inputs.regex import compile_re2
from winsuite.inputs.regex import quote_meta
from winsuite.policy.exclusions import Exclusion
from winsuite.policy.exclusions import ScopeFacts
from winsuite_reports.conventions import SUITE_NAME

# What e2e.test skips when it is given neither focus nor skip (test/e2e/framework/test_context.go).
DEFAULT_SKIP = r"\[Flaky\]|\[Feature:.+\]"


class Outcome(enum.Enum):
    RUN = "run"
    SKIP = "skip"  # reported as skipped, with the reason
    DESELECT = "deselect"  # not part of the run at all (focus/skip), as in ginkgo


@dataclasses.dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    reason: str = ""
    exclusion: Exclusion | None = None


RUN = Verdict(Outcome.RUN)


def _compile(patterns: Sequence[str], flag: str) -> GoRegex | None:
    """Join like ginkgo does (`strings.Join(…, "|")`) and compile with Go regexp semantics; ginkgo ignores a value
    that joins to '' (`--ginkgo.skip ''` skips nothing)."""
    if not "|".join(patterns):
        return None
    for pattern in patterns:  # name the offending flag value precisely
        try:
            compile_re2(pattern)
        except RegexError as err:
            raise UsageError(f"{flag} {pattern!r}: {err.problem} (offset {err.pos})") from None
    try:
        return compile_re2("|".join(patterns))
    except RegexError as err:
        raise UsageError(f"{flag} values joined with '|': {err.problem}") from None


def exact_focus(names: list[str]) -> str:
    """A --focus that selects exactly these full names: ginkgo matches "<suite description> <spec text>"."""
    return f"^{quote_meta(SUITE_NAME)} (?:" + "|".join(quote_meta(n) for n in names) + ")$"


class Selector:
    """ginkgo's --focus/--skip: selected when any focus matches (or none is given) and no skip matches."""

    def __init__(self, focus: Sequence[str] = (), skip: Sequence[str] = (), apply_default_skip: bool = True) -> None:
        self.focus = tuple(focus)
        self.skip = tuple(skip)
        self.effective_skip = (DEFAULT_SKIP,) if apply_default_skip and not focus and not skip else self.skip
        self._focus_re = _compile(self.focus, "--focus")
        self._skip_re = _compile(self.effective_skip, "--skip")
        self._skip_values = Alternatives(list(self.effective_skip)) if self.effective_skip else None

    def why_not(self, full_name: str) -> str | None:
        """None when selected, otherwise the reason in the words of the flags."""
        text = f"{SUITE_NAME} {full_name}"  # ginkgo matches "<suite description> <spec text>"
        if self._focus_re is not None and not self._focus_re.matches(text):
            return "does not match --focus"
        if self._skip_re is not None and self._skip_re.matches(text):
            assert self._skip_values is not None
            # The joined regex decides (an inline flag in one value reaches the next ones, as in ginkgo);
            # the reason names the first value that matches on its own.
            which = self._skip_values.matching(text)
            matching = self.effective_skip[min(which)] if which else "|".join(self.effective_skip)
            default = " (e2e.test's default when neither focus nor skip is given)" if matching == DEFAULT_SKIP else ""
            return f"matches --skip {matching!r}{default}"
        return None

    def selects(self, full_name: str) -> bool:
        text = f"{SUITE_NAME} {full_name}"
        return (self._focus_re is None or self._focus_re.matches(text)) and not (
            self._skip_re is not None and self._skip_re.matches(text))

    def filter(self, names: Iterable[str]) -> list[str]:
        return [n for n in names if self.selects(n)]


@dataclasses.dataclass(frozen=True)
class Policy:
    """Everything that decides a test's fate in a run, besides its own needs from the cluster."""

    selector: Selector
    target_os: str
    exclusions: tuple[Exclusion, ...] = ()
    facts: ScopeFacts | None = None
    run_excluded: bool = False
    today: datetime.date = dataclasses.field(default_factory=datetime.date.today)
    label_filter: str = ""  # ginkgo --label-filter over the tests' tags

    @functools.cached_property
    def _labels_selected(self) -> Filter:
        return parse_label_filter(self.label_filter)

    @functools.cached_property
    def _scope_facts(self) -> ScopeFacts:
        """The cluster's facts plus the run's target OS, which exclusions may be scoped to."""
        return dataclasses.replace(self.facts or ScopeFacts(), node_os=self.target_os)

    def decide(self, full_name: str, tags: Iterable[Tag]) -> Verdict:
        why = self.selector.why_not(full_name)
        if why is not None:
            return Verdict(Outcome.DESELECT, why)
        tags = tuple(tags)
        if self.label_filter and not self._labels_selected([t.value for t in tags]):
            return Verdict(Outcome.DESELECT, f"does not match --label-filter {self.label_filter!r}")
        if self.target_os == NodeOS.WINDOWS and LinuxOnly in tags:
            return Verdict(Outcome.SKIP, "[LinuxOnly]: uses Linux-only features and the target OS is windows")
        for exclusion in self.exclusions:
            if exclusion.matches(full_name) and exclusion.applies(self._scope_facts, self.today):
                if self.run_excluded:
                    return Verdict(Outcome.RUN, exclusion.reason, exclusion)
                return Verdict(Outcome.SKIP, exclusion.skip_reason(), exclusion)
        return RUN


def is_serial(tags: Iterable[Tag]) -> bool:
    """[Serial] and [Disruptive] tests run alone, in phase 2."""
    return any(t in (Serial, Disruptive) for t in tags)


def in_phase(tags: Iterable[Tag], phase: str) -> bool:
    return phase == "all" or (phase == "serial") == is_serial(tags)
