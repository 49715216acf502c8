"""policy/label_filter.py: ginkgo's --label-filter language, read as ginkgo reads it (types/label_filter.go)."""

from __future__ import annotations

import pytest

from winsuite.inputs.label_filter import LabelFilterError
from winsuite.inputs.label_filter import parse_label_filter

SPEC = ["sig-node", "Conformance", "NodeConformance", "Feature:Windows", "Serial"]
OTHER = ["sig-storage", "Feature:GPU", "Feature:Windows"]


@pytest.mark.parametrize(("expression", "spec", "other"), [
    ("", True, True),
    ("Conformance", True, False),
    ("conformance", True, False),  # plain labels match without regard to case
    ("!Conformance", False, True),
    ("Conformance && Serial", True, False),
    ("Conformance || sig-storage", True, True),
    ("Conformance, sig-storage", True, True),  # a comma is an or
    ("!Serial && Feature:Windows", False, True),
    ("Serial || sig-storage && Feature:GPU", True, True),  # && binds tighter than ||
    ("(Serial || sig-storage) && !Feature:GPU", True, False),
    ("!(Serial || Conformance)", False, True),
    ("/^sig-/ && !/Serial/", False, True),
    ("/Node/", True, False),
    ("Feature: containsAny {Windows, Linux}", True, True),
    ("Feature: containsAll {Windows, GPU}", False, True),
    ("Feature: consistsOf {windows}", True, False),  # set values match without regard to case
    ("Feature: isSubsetOf {Windows}", True, False),
    ("Feature: isEmpty", False, False),
    ("Storage: isEmpty && Feature: containsAny Windows", True, True),
])
def test_expressions_select_as_ginkgo_does(expression: str, spec: bool, other: bool) -> None:
    selected = parse_label_filter(expression)
    assert (selected(SPEC), selected(OTHER)) == (spec, other)


@pytest.mark.parametrize(("expression", "problem"), [
    ("Conformance & Serial", "did you mean '&&'?"),
    ("Conformance | Serial", "did you mean '||'?"),
    ("Conformance Serial)", "mismatched ')'"),
    ("(Conformance", "missing ')'"),
    ("()", "empty '()' group"),
    ("&& Serial", "expected a label"),
    ("Serial &&", "expected a label"),
    ("/a(?=b)/", "invalid or unsupported Perl syntax"),
    ("Feature: bogus {a}", "invalid set operation 'bogus'"),
    ("Feature: containsAny", "needs an argument"),
    ("Feature: isEmpty {a}", "isEmpty takes no argument"),
    ("Feature containsAny {a}", "without a set key"),
    ("Feature: containsAny {a", "missing closing '}'"),
])
def test_bad_expressions_say_where_and_what(expression: str, problem: str) -> None:
    with pytest.raises(LabelFilterError) as caught:
        parse_label_filter(expression)
    assert problem in str(caught.value) and str(caught.value).startswith(f"invalid label filter {expression!r}")
