"""winsuite.policy.selection: ginkgo's focus/skip semantics, [LinuxOnly] on Windows, exclusions
with scope and expiry."""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any

import pytest

from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import LinuxOnly
from winsuite.authoring.naming import Tag
from winsuite.errors import UsageError
from winsuite.policy.exclusions import Exclusion
from winsuite.policy.exclusions import Scope
from winsuite.policy.exclusions import ScopeFacts
from winsuite.policy.selection import DEFAULT_SKIP
from winsuite.policy.selection import Outcome
from winsuite.policy.selection import Policy
from winsuite.policy.selection import Selector

POD = "[sig-node] Pods should get a host IP [NodeConformance] [Conformance]"
FLAKY = "[sig-node] Security Context should support volume SELinux relabeling [Flaky] [LinuxOnly]"
FEATURE = "[sig-windows] [Feature:GMSA] GMSA support works end to end"
DNS = "[sig-network] DNS should provide DNS for the cluster [Conformance]"
TODAY = datetime.date(2026, 3, 1)


@pytest.mark.parametrize(
    ("focus", "skip", "name", "selected"),
    [
        # repeated focus values are ORed
        (("GMSA", "DNS"), (), FEATURE, True),
        (("GMSA", "DNS"), (), DNS, True),
        (("GMSA", "DNS"), (), POD, False),
        # …by joining them with "|", so an inline flag of one value reaches the next (Go: (?i)gmsa|POD)
        (("(?i)gmsa", "PODS SHOULD"), (), POD, True),
        # matched against "Kubernetes e2e suite <name>", anywhere in it
        ((r"^Kubernetes e2e suite \[sig-node\]",), (), POD, True),
        ((r"^\[sig-node\]",), (), POD, False),
        ((r"suite \[sig-node\] Pods",), (), POD, True),
        (("host IP",), (), POD, True),
        # skip wins over focus
        ((r"\[sig-node\]",), (r"\[Conformance\]",), POD, False),
        ((r"\[sig-node\]",), (r"\[Slow\]",), POD, True),
        # e2e.test's default skip applies only when neither focus nor skip is given
        ((), (), FLAKY, False),
        ((), (), FEATURE, False),
        ((), (), POD, True),
        ((r"\[Flaky\]",), (), FLAKY, True),
        ((), (r"\[Serial\]",), FEATURE, True),
    ],
)
def test_selects_like_ginkgo(focus: tuple[str, ...], skip: tuple[str, ...], name: str, selected: bool) -> None:
    assert Selector(focus, skip).selects(name) is selected


def test_default_skip_is_e2e_tests_and_can_be_turned_off() -> None:
    assert DEFAULT_SKIP == r"\[Flaky\]|\[Feature:.+\]"
    assert Selector(apply_default_skip=False).selects(FLAKY)


@pytest.mark.parametrize(
    ("selector", "name", "reason"),
    [
        (Selector(("GMSA",)), POD, "does not match --focus"),
        (Selector((), (r"\[Slow\]", r"\[Conformance\]")), POD, r"matches --skip '\\[Conformance\\]'"),
        (Selector(), FLAKY, "(e2e.test's default when neither focus nor skip is given)"),
    ],
)
def test_why_not_says_which_flag_left_a_test_out(selector: Selector, name: str, reason: str) -> None:
    why = selector.why_not(name)
    assert why is not None
    assert reason in why


def test_filter_keeps_input_order() -> None:
    names = [DNS, FEATURE, POD]
    assert Selector(("DNS|Pods",)).filter(names) == [DNS, POD]


@pytest.mark.parametrize("flag", ["--focus", "--skip"])
@pytest.mark.parametrize("pattern", ["a(?=b)", "(unclosed", r"\1"])
def test_invalid_regex_error_names_the_flag_and_value(flag: str, pattern: str) -> None:
    focus, skip = ((pattern,), ()) if flag == "--focus" else ((), (pattern,))
    with pytest.raises(UsageError) as caught:
        Selector(focus, skip)
    assert str(caught.value).startswith(f"{flag} {pattern!r}: ")


def exclusion(**fields: Any) -> Exclusion:
    base = Exclusion(source="x.yaml#exclusions[0]", reason="not on Windows", issue="https://issue/1", pattern="DNS")
    return dataclasses.replace(base, **fields)


def policy(**fields: Any) -> Policy:
    base = Policy(selector=Selector(apply_default_skip=False), target_os="windows", today=TODAY)
    return dataclasses.replace(base, **fields)


@pytest.mark.parametrize(("target_os", "outcome"), [("windows", Outcome.SKIP), ("linux", Outcome.RUN)])
def test_linux_only_is_skipped_on_a_windows_target_only(target_os: str, outcome: Outcome) -> None:
    verdict = policy(target_os=target_os).decide(FLAKY, (LinuxOnly,))
    assert verdict.outcome is outcome
    if outcome is Outcome.SKIP:
        assert verdict.reason.startswith("[LinuxOnly]")


def test_linux_only_is_read_from_tags_not_from_the_name() -> None:
    assert policy().decide(FLAKY, (Conformance,)).outcome is Outcome.RUN


def test_focus_and_skip_deselect_before_anything_else() -> None:
    verdict = policy(selector=Selector(("GMSA",)), exclusions=(exclusion(pattern="Security"),)).decide(
        FLAKY, (LinuxOnly,)
    )
    assert (verdict.outcome, verdict.reason) == (Outcome.DESELECT, "does not match --focus")


def test_excluded_test_is_skipped_with_reason_and_issue() -> None:
    entry = exclusion()
    verdict = policy(exclusions=(entry,)).decide(DNS, (Conformance,))
    assert verdict.outcome is Outcome.SKIP
    assert verdict.reason == "excluded: not on Windows (https://issue/1)"
    assert verdict.exclusion is entry


def test_run_excluded_runs_the_test_and_keeps_the_exclusion() -> None:
    entry = exclusion()
    verdict = policy(exclusions=(entry,), run_excluded=True).decide(DNS, ())
    assert (verdict.outcome, verdict.exclusion, verdict.reason) == (Outcome.RUN, entry, "not on Windows")


@pytest.mark.parametrize(
    ("expires", "outcome"),
    [
        (None, Outcome.SKIP),
        (TODAY + datetime.timedelta(days=1), Outcome.SKIP),
        (TODAY, Outcome.SKIP),  # valid through its expiry date
        (TODAY - datetime.timedelta(days=1), Outcome.RUN),
    ],
)
def test_expired_exclusion_no_longer_applies(expires: datetime.date | None, outcome: Outcome) -> None:
    assert policy(exclusions=(exclusion(expires=expires),)).decide(DNS, ()).outcome is outcome


@pytest.mark.parametrize(
    ("facts", "outcome"),
    [
        (ScopeFacts(windows_builds=frozenset({"10.0.17763"})), Outcome.SKIP),
        (ScopeFacts(windows_builds=frozenset({"10.0.17763", "10.0.20348"})), Outcome.SKIP),
        (ScopeFacts(windows_builds=frozenset({"10.0.20348"})), Outcome.RUN),
        (ScopeFacts(), Outcome.RUN),  # the build is unknown: a scoped exclusion does not apply
        (None, Outcome.RUN),
    ],
)
def test_scoped_exclusion_applies_only_where_its_scope_matches(facts: ScopeFacts | None, outcome: Outcome) -> None:
    scoped = exclusion(scope=Scope(windows_builds=("10.0.17763",)))
    assert policy(exclusions=(scoped,), facts=facts).decide(DNS, ()).outcome is outcome


def test_first_applicable_exclusion_wins() -> None:
    out_of_scope = exclusion(id="a", scope=Scope(cni=("calico",)))
    applicable = exclusion(id="b")
    verdict = policy(exclusions=(out_of_scope, applicable), facts=ScopeFacts(cni="flannel")).decide(DNS, ())
    assert verdict.exclusion is applicable


def test_tags_are_any_iterable() -> None:
    assert policy().decide(FLAKY, iter([Tag("LinuxOnly")])).outcome is Outcome.SKIP
