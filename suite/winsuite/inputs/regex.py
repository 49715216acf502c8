"""Go RE2 regexes (what ginkgo's --focus/--skip use), compiled by RE2 itself (google-re2), or refused clearly.

Go's regexp and the RE2 library share their syntax and semantics (leftmost-first matching, ASCII `\\d \\w \\s \\b`,
`$` at the end of the text, `(?U)`, Unicode classes `\\pL`). Two things differ and are handled here: RE2 accepts
`\\C` (any byte), which Go rejects, and the error texts, which are given in Go's words so a message reads as the
one ginkgo would print.
"""

from __future__ import annotations

import functools
from typing import Any

import re2

# RE2's error text -> Go regexp/syntax's (ErrorCode strings).
_GO_WORDS = {
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "bad repetition operator": "invalid nested repetition operator",
    "no argument for repetition operator": "missing argument to repetition operator",
    "missing )": "missing closing )",
    "missing ]": "missing closing ]",
    "invalid repetition size": "invalid repeat count",
    "trailing \\": "trailing backslash at end of expression",
    "invalid named capture group": "invalid named capture",
    "pattern too large - compile failed": "expression too large",
    "pattern too large - reverse compile failed": "expression too large",
}


# What a user coming from Perl or Python regexes needs to hear besides Go's words.
_HINTS = {
    "invalid or unsupported Perl syntax": "Go's regexp (RE2) has no lookarounds, atomic groups, comments "
                                          "or flags other than i, m, s, U",
}
_BACKREFERENCE_HINT = "Go's regexp (RE2) has no backreferences"


class RegexError(ValueError):
    """A focus/skip regex that Go's regexp (and so ginkgo) would not accept."""

    def __init__(self, pattern: str, pos: int, problem: str) -> None:
        self.pattern = pattern
        self.pos = pos
        self.problem = problem
        super().__init__(f"invalid regex {pattern!r} at offset {pos}: {problem}")


# RE2's memory budget per pattern. Yes/no matching runs RE2's DFA alone (RE2::Set), which can run out of memory
# where a full search would fall back to the NFA; it is used only where a DFA of this budget cannot run out.
_MAX_MEM = 64 << 20


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on stderr
    options.max_mem = _MAX_MEM
    return options


_OPTIONS = _options()


class _SearchSet:
    """RE2::Set over some patterns: which of them match a text, in one DFA pass (no match positions)."""

    def __init__(self, patterns: list[str], program_size: int) -> None:
        self._set = re2.Set.SearchSet(_OPTIONS)
        for pattern in patterns:
            self._set.Add(pattern)
        self._set.Compile()
        # A DFA state is at most 4 bytes per program instruction; a text of n bytes visits at most n + 1 states.
        self._max_bytes = _MAX_MEM // (8 * max(program_size, 1))

    def fits(self, text: str) -> bool:
        return 4 * len(text) + 2 < self._max_bytes

    def matching(self, text: str) -> list[int]:
        return sorted(self._set.Match(text) or ())  # the binding says None for "none match"


class GoRegex:
    """A compiled Go regex: `search` finds the leftmost-first match, `matches` answers yes or no quickly."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._regexp = re2.compile(pattern, _OPTIONS)
        self._set = _SearchSet([pattern], self._regexp.programsize)

    def search(self, text: str) -> Any:
        """The match object (`.group(0)`, `.span()`), or None."""
        return self._regexp.search(text)

    def matches(self, text: str) -> bool:
        if self._set.fits(text):
            return bool(self._set.matching(text))
        return self._regexp.search(text) is not None


class Alternatives:
    """Several Go regexes at once (ginkgo's repeated --skip values): which of them match a text."""

    def __init__(self, patterns: list[str]) -> None:
        self.regexes = [compile_re2(p) for p in patterns]
        size = sum(r._regexp.programsize for r in self.regexes)
        self._set = _SearchSet(patterns, size)

    def matching(self, text: str) -> list[int]:
        if self._set.fits(text):
            return self._set.matching(text)
        return [i for i, regex in enumerate(self.regexes) if regex.matches(text)]


def _go_problem(pattern: str, error: Exception) -> RegexError:
    text = error.args[0].decode() if error.args and isinstance(error.args[0], bytes) else str(error)
    code, _, fragment = text.partition(": ")
    words = _GO_WORDS.get(code, code)
    pos = max(pattern.find(fragment), 0) if fragment else len(pattern)
    problem = f"{words} '{fragment}'" if fragment else words
    backreference = words == "invalid escape sequence" and fragment[1:].isdigit()
    hint = _BACKREFERENCE_HINT if backreference else _HINTS.get(words, "")
    return RegexError(pattern, pos, f"{problem}: {hint}" if hint else problem)


def _refuse_byte_escape(pattern: str) -> None:
    """`\\C` (any byte) is RE2-only; Go's parser says "invalid escape sequence" (outside \\Q…\\E quotes)."""
    i = 0
    while i < len(pattern) - 1:
        if pattern[i] != "\\":
            i += 1
            continue
        if pattern[i + 1] == "Q":
            end = pattern.find("\\E", i + 2)
            i = len(pattern) if end < 0 else end + 2
            continue
        if pattern[i + 1] == "C":
            raise RegexError(pattern, i, "invalid escape sequence '\\C'")
        i += 2


@functools.lru_cache(maxsize=1024)
def compile_re2(pattern: str) -> GoRegex:
    """The compiled pattern, with Go's semantics; RegexError with Go's message for what Go rejects."""
    _refuse_byte_escape(pattern)
    try:
        return GoRegex(pattern)
    except re2.error as err:
        raise _go_problem(pattern, err) from None


_META = frozenset("\\.+*?()|[]{}^$")


def quote_meta(text: str) -> str:
    """Go's regexp.QuoteMeta: `text` as a regex matching it literally (ginkgo's --focus takes it as is)."""
    return "".join("\\" + c if c in _META else c for c in text)
