"""policy/regex.py: Go RE2 patterns (ginkgo's --focus/--skip) read as Go reads them, or refused in Go's words."""

from __future__ import annotations

import pytest

from winsuite.inputs.regex import Alternatives
from winsuite.inputs.regex import RegexError
from winsuite.inputs.regex import compile_re2

# (pattern, text, Go's leftmost match or None). Every row was checked against Go 1.26's regexp
# (regexp.Compile + FindStringIndex, a throwaway program outside the repo); where Python's `re` reads the
# pattern differently, the comment says what Python alone would do.
AGREES_WITH_GO: list[tuple[str, str, str | None]] = [
    # inline flags mid-pattern apply to the rest of the group, alternatives included
    ("a(?i)b|c", "aB", "aB"),
    ("a(?i)b|c", "C", "C"),  # Python 3.11 rejects a global flag not at the start
    ("a(?i)b|c", "Ab", None),
    ("(a(?i)b)c", "aBc", "aBc"),
    ("(a(?i)b)c", "aBC", None),  # the flag ends with its group
    ("(?i:x)y", "Xy", "Xy"),
    ("(?i:x)y", "XY", None),
    ("(?i)a(?-i)b", "Ab", "Ab"),
    ("(?i)a(?-i)b", "AB", None),
    ("(?i)[a-c]+", "xABCx", "ABC"),
    ("(?i)[^a]", "A", None),
    # (?U) swaps greedy and lazy
    ("(?U)a+", "aaa", "a"),
    ("(?U)a+?", "aaa", "aaa"),
    ("a+?", "aaa", "a"),
    ("(?U:a+)a+", "aaaa", "aaaa"),
    # $ is the end of the text only; (?m)$ is the end of a line
    ("a$", "a\n", None),  # Python's $ also matches before a final newline
    ("a$", "ba", "a"),
    ("(?m)a$", "a\nb", "a"),
    ("a\\z", "a\n", None),  # Python has no \z before 3.14
    ("a\\z", "ba", "a"),
    ("^b", "a\nb", None),
    ("(?m)^b", "a\nb", "b"),
    ("\\Aa", "ba", None),
    ("a.b", "a\nb", None),
    ("(?s)a.b", "a\nb", "a\nb"),
    # POSIX classes, negated ones, and negated Perl classes inside classes
    ("[[:digit:]]+", "ab12c", "12"),
    ("[[:^alpha:]]+", "ab12c", "12"),
    ("[[:alpha:][:digit:]]+", "-a1-", "a1"),
    ("[[:upper:]]ustom", "Custom", "Custom"),  # Python reads [[:upper:]] as a set of ':' 'u' 'p' …
    ("[[:word:]]+", "-a_1-", "a_1"),
    ("[^\\D]+", "ab12c", "12"),
    ("[a\\D]+", "1ab1", "ab"),
    ("[^[:space:]]+", " x ", "x"),
    # \Q…\E quotes, and a repetition after it applies to its last character only
    ("\\Qa.b\\E", "axb", None),
    ("\\Qa.b\\E", "a.b", "a.b"),
    ("\\Qa.b", "xa.b", "a.b"),
    ("\\Qab\\E*", "abbb", "abbb"),
    ("\\Qa+\\E", "aa+", "a+"),
    ("a\\Q\\E*", "aaa", "aaa"),
    # octal escapes: \12 is a character, never a backreference
    ("\\012", "a\nb", "\n"),
    ("a\\12b", "a\nb", "a\nb"),  # Python reads \12 as a backreference to group 12
    ("\\101", "A", "A"),
    ("\\x41\\x{263a}", "A☺", "A☺"),
    # x{,n} is literal text in Go; x{n,m} repeats
    ("x{,2}", "xx", None),  # Python 3.11 reads {,2} as {0,2}
    ("x{,2}", "x{,2}", "x{,2}"),
    ("cpu{,1}", "cpu", None),
    ("x{2,3}", "xxxx", "xxx"),
    ("x{2}", "xxx", "xx"),
    ("x{2,}", "xxxx", "xxxx"),
    ("a{", "a{", "a{"),
    ("^*a", "a", "a"),
    ("\\b*a", "a", "a"),  # Go repeats assertions; Python needs them grouped
    # \b \d \w \s are ASCII-only in Go
    ("a\\b", "aé", "a"),  # Python's Unicode \b sees no boundary between a and é
    ("\\w+", "héllo", "h"),
    ("\\d", "٣", None),
    ("\\s", "\v", None),  # Go's \s is [\t\n\f\r ]
    ("\\S+", "\vx", "\vx"),
    # named groups in both spellings, and class edge cases
    ("(?P<n>a)b", "ab", "ab"),
    ("(?<n>a)b", "ab", "ab"),
    ("[]a]+", "x]a]", "]a]"),
    ("[a-]+", "x-a-", "-a-"),
    ("[^]a]+", "]]bc", "bc"),
    ("a|", "b", ""),
    ("Pods (?i)SHOULD get a host IP", "Pods should get a host IP [NodeConformance]", "Pods should get a host IP"),
    # Unicode classes, which Go and ginkgo accept
    ("\\pL+", "-héllo-", "héllo"),
    ("\\pL+ \\[Serial\\]", "[sig-apps] Daemon set [Serial]", "set [Serial]"),
    ("\\p{Greek}+", "abcαβγ", "αβγ"),
    ("[\\p{Lu}]+", "abcDEF", "DEF"),
    ("\\PL+", "ab12cd", "12"),
    ("\\QC:\\E", "C:\\x", "C:"),  # \C inside a quote is literal text
]

# (pattern, what the one-line message says): each is Go's own regexp/syntax error text for the pattern (Go 1.26).
REFUSED: list[tuple[str, str]] = [
    ("a(?=b)", "invalid or unsupported Perl syntax '(?='"),
    ("a(?!b)", "invalid or unsupported Perl syntax '(?!'"),
    ("(?<=a)b", "invalid or unsupported Perl syntax '(?<='"),
    ("(?<!a)b", "invalid or unsupported Perl syntax '(?<!'"),
    ("(a)\\1", "invalid escape sequence '\\1'"),
    ("a**", "invalid nested repetition operator '**'"),
    ("a++", "invalid nested repetition operator '++'"),
    ("x{2}{3}", "invalid nested repetition operator '{2}{3}'"),
    ("*a", "missing argument to repetition operator '*'"),
    ("a|*", "missing argument to repetition operator '*'"),
    ("(?i)*", "missing argument to repetition operator '*'"),
    ("\\Q\\E*", "missing argument to repetition operator '*'"),
    ("(?x)a b", "invalid or unsupported Perl syntax '(?x'"),
    ("\\C", "invalid escape sequence '\\C'"),  # RE2's any-byte escape; Go has none
    ("(a", "missing closing ) '(a'"),
    ("a)", "unexpected ) 'a)'"),
    ("x{1001}", "invalid repeat count '{1001}'"),
    ("x{3,2}", "invalid repeat count '{3,2}'"),
    ("[a", "missing closing ] '[a'"),
    ("[z-a]", "invalid character class range 'z-a'"),
    ("[[:foo:]]", "invalid character class range '[:foo:]'"),
    ("a\\Z", "invalid escape sequence '\\Z'"),
    ("a\\", "trailing backslash at end of expression"),
]


def leftmost_match(pattern: str, text: str) -> str | None:
    found = compile_re2(pattern).search(text)
    return None if found is None else found.group(0)


@pytest.mark.parametrize(("pattern", "text", "expected"), AGREES_WITH_GO)
def test_matches_like_go_regexp(pattern: str, text: str, expected: str | None) -> None:
    assert leftmost_match(pattern, text) == expected


@pytest.mark.parametrize(("pattern", "problem"), REFUSED)
def test_refuses_what_go_rejects_with_one_clear_message(pattern: str, problem: str) -> None:
    with pytest.raises(RegexError) as caught:
        compile_re2(pattern)
    message = str(caught.value)
    assert problem in message
    assert message.startswith(f"invalid regex {pattern!r} at offset ")
    assert "\n" not in message


def test_error_names_the_offset_of_the_problem() -> None:
    with pytest.raises(RegexError) as caught:
        compile_re2("ab(?=c)")
    assert (caught.value.pattern, caught.value.pos) == ("ab(?=c)", 2)


@pytest.mark.parametrize(("pattern", "text", "expected"), AGREES_WITH_GO)
def test_yes_no_matching_agrees_with_search(pattern: str, text: str, expected: str | None) -> None:
    assert compile_re2(pattern).matches(text) is (expected is not None)


def test_alternatives_name_every_value_that_matches_on_its_own() -> None:
    values = Alternatives([r"\[Serial\]", "DNS", "(?i)dns"])
    assert values.matching("[sig-network] DNS should work [Serial]") == [0, 1, 2]
    assert values.matching("[sig-network] dns") == [2]
    assert values.matching("nothing") == []


def test_a_text_too_long_for_the_dfa_budget_is_searched_instead() -> None:
    regex = compile_re2("needle$")
    long_text = "x" * 10_000_000 + "needle"
    assert regex.matches(long_text) and not regex.matches(long_text + "x")
