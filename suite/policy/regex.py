"""Go RE2 regexes (what ginkgo's --focus/--skip use) translated to Python `re`, or rejected clearly.

Go's regexp and Python's re read several constructs differently: inline flags mid-pattern, `$`,
POSIX classes, `\\z`, octal escapes, `x{,n}`, ASCII-only `\\d \\w \\s \\b`, the `U` flag. Constructs
that Go rejects (lookarounds, backreferences, possessive quantifiers, `(?x)`) are rejected here too,
because ginkgo would refuse to start with them.
"""

from __future__ import annotations

import dataclasses
import functools
import re

MAX_REPEAT = 1000  # Go's regexp/syntax limit on {n,m} counts

_DIGIT = [("0", "9")]
_WORD = [("0", "9"), ("A", "Z"), ("a", "z"), ("_", "_")]
_SPACE = [("\t", "\n"), ("\f", "\r"), (" ", " ")]
_PERL_CLASSES = {"d": _DIGIT, "w": _WORD, "s": _SPACE}
_POSIX_CLASSES: dict[str, list[tuple[str, str]]] = {
    "alnum": [("0", "9"), ("A", "Z"), ("a", "z")],
    "alpha": [("A", "Z"), ("a", "z")],
    "ascii": [("\x00", "\x7f")],
    "blank": [("\t", "\t"), (" ", " ")],
    "cntrl": [("\x00", "\x1f"), ("\x7f", "\x7f")],
    "digit": _DIGIT,
    "graph": [("!", "~")],
    "lower": [("a", "z")],
    "print": [(" ", "~")],
    "punct": [("!", "/"), (":", "@"), ("[", "`"), ("{", "~")],
    "space": [("\t", "\r"), (" ", " ")],
    "upper": [("A", "Z")],
    "word": _WORD,
    "xdigit": [("0", "9"), ("A", "F"), ("a", "f")],
}
_SIMPLE_ESCAPES = {"a": "\a", "f": "\f", "t": "\t", "n": "\n", "r": "\r", "v": "\v"}
_FLAGS = "imsU"


class RegexError(ValueError):
    """A focus/skip regex that Go's regexp (and so ginkgo) would not accept, or that cannot be translated."""

    def __init__(self, pattern: str, pos: int, problem: str) -> None:
        self.pattern = pattern
        self.pos = pos
        self.problem = problem
        super().__init__(f"invalid regex {pattern!r} at offset {pos}: {problem}")


Ranges = list[tuple[str, str]]


@dataclasses.dataclass
class _Group:
    """Parse state of one parenthesised group (or the whole pattern)."""

    flags: frozenset[str]  # flags in force at this point of the group (Go semantics)
    base: frozenset[str]  # flags in force when the group opened (what Python has too)
    wrapped: bool = False  # an open `(?flags:` we emitted to carry a mid-group flag change
    last_repeatable: bool = False  # whether the previous item may take a repetition operator
    last_repeated: bool = False  # whether the previous item already is a repetition


class _Translator:
    def __init__(self, pattern: str) -> None:
        self.src = pattern
        self.pos = 0
        self.out: list[str] = []
        self.stack: list[_Group] = [_Group(frozenset(), frozenset())]

    # -- helpers ---------------------------------------------------------------------------------
    def fail(self, problem: str, pos: int | None = None) -> RegexError:
        return RegexError(self.src, self.pos if pos is None else pos, problem)

    @property
    def group(self) -> _Group:
        return self.stack[-1]

    def peek(self, n: int = 0) -> str:
        i = self.pos + n
        return self.src[i] if i < len(self.src) else ""

    def atom(self, text: str) -> None:
        self.out.append(text)
        self.group.last_repeatable = True
        self.group.last_repeated = False

    def assertion(self, text: str) -> None:
        self.out.append(f"(?:{text})")  # grouped: Python cannot repeat a bare `^`
        self.group.last_repeatable = True  # Go allows `^*`; it is harmless
        self.group.last_repeated = False

    # -- driver ------------------------------------------------------------------------------------
    def translate(self) -> str:
        while self.pos < len(self.src):
            self.step()
        if len(self.stack) > 1:
            raise self.fail("missing closing )")
        self.close_wrapper()
        return "".join(self.out)

    def step(self) -> None:
        c = self.src[self.pos]
        if c == "(":
            self.open_group()
        elif c == ")":
            self.close_group()
        elif c == "|":
            self.pos += 1
            self.close_wrapper()
            self.out.append("|")
            self.reopen_wrapper()
            self.group.last_repeatable = False
        elif c in "*+?":
            self.repeat(c, self.pos + 1)
        elif c == "{" and (m := self.counted_repeat()) is not None:
            self.repeat(m[0], m[1])
        elif c == "[":
            self.atom(self.char_class())
        elif c == "\\":
            self.escape()
        elif c == ".":
            self.pos += 1
            self.atom(".")
        elif c == "^":
            self.pos += 1
            self.assertion("^")
        elif c == "$":
            self.pos += 1
            self.assertion("$" if "m" in self.group.flags else r"\Z")
        else:
            self.pos += 1
            self.atom(re.escape(c))

    # -- repetition --------------------------------------------------------------------------------
    def counted_repeat(self) -> tuple[str, int] | None:
        """`{n}`, `{n,}`, `{n,m}` as Go reads them; None when the brace is a literal (e.g. `{,5}`)."""
        m = re.compile(r"\{(\d+)(,(\d*))?\}").match(self.src, self.pos)
        if m is None:
            return None
        lo, hi = int(m.group(1)), m.group(3)
        if lo > MAX_REPEAT or (hi and int(hi) > MAX_REPEAT) or (hi and int(hi) < lo):
            raise self.fail(f"invalid repeat count {m.group(0)}")
        return m.group(0), m.end()

    def repeat(self, op: str, end: int) -> None:
        start = self.pos
        if not self.group.last_repeatable:
            raise self.fail(f"missing argument to repetition operator {op!r}", start)
        if self.group.last_repeated:
            raise self.fail(f"invalid nested repetition operator {op!r}", start)
        self.pos = end
        lazy = self.peek() == "?"
        if lazy:
            self.pos += 1
        if "U" in self.group.flags:
            lazy = not lazy
        self.out.append(op + ("?" if lazy else ""))
        self.group.last_repeated = True

    # -- groups and flags --------------------------------------------------------------------------
    def open_group(self) -> None:
        start = self.pos
        rest = self.src[self.pos :]
        named = re.match(r"\(\?P?<([A-Za-z0-9_]+)>", rest)
        if named:
            self.pos += named.end()
            self.push("(?P<" + named.group(1) + ">")
            return
        if rest.startswith("(?"):
            self.perl_flags(start)
            return
        self.pos += 1
        self.push("(")

    def perl_flags(self, start: int) -> None:
        m = re.compile(r"\(\?([A-Za-z]*)(?:-([A-Za-z]*))?([:)])").match(self.src, self.pos)
        if m is None or not set(m.group(1) + (m.group(2) or "")) <= set(_FLAGS):
            unsupported = self.src[start : start + 4]
            raise self.fail(
                f"unsupported Perl syntax {unsupported!r}: Go's regexp (RE2) has no lookarounds, "
                "atomic groups, comments or flags other than i, m, s, U",
                start,
            )
        on, off, end = set(m.group(1)), set(m.group(2) or ""), m.group(3)
        if m.group(2) is not None and not off:
            raise self.fail("missing flag after '-'", start)
        if not on and not off:
            raise self.fail("empty flag group", start)
        self.pos = m.end()
        flags = (self.group.flags | on) - off
        if end == ":":
            self.push("(?:", flags)
        else:  # (?flags) applies to the rest of the current group, alternatives included
            self.close_wrapper()
            self.group.flags = frozenset(flags)
            self.reopen_wrapper()
            self.group.last_repeatable = False

    def push(self, opener: str, flags: set[str] | frozenset[str] | None = None) -> None:
        parent = self.group.flags
        new = frozenset(parent if flags is None else flags)
        self.out.append(opener)
        self.stack.append(_Group(new, parent))
        self.reopen_wrapper()

    def close_group(self) -> None:
        if len(self.stack) == 1:
            raise self.fail("unexpected )")
        self.pos += 1
        self.close_wrapper()
        self.stack.pop()
        self.atom(")")

    def close_wrapper(self) -> None:
        if self.group.wrapped:
            self.out.append(")")
            self.group.wrapped = False

    def reopen_wrapper(self) -> None:
        group = self.group
        if group.flags == group.base:
            return
        python_flags = {f for f in "ims"}
        on = "".join(sorted((group.flags - group.base) & python_flags))
        off = "".join(sorted((group.base - group.flags) & python_flags))
        if on or off:
            self.out.append(f"(?{on}{'-' + off if off else ''}:")
            group.wrapped = True

    # -- escapes -------------------------------------------------------------------------------------
    def escape(self) -> None:
        start = self.pos
        c = self.peek(1)
        if c == "":
            raise self.fail("trailing backslash", start)
        if c == "Q":
            end = self.src.find(r"\E", self.pos + 2)
            literal = self.src[self.pos + 2 :] if end < 0 else self.src[self.pos + 2 : end]
            self.pos = len(self.src) if end < 0 else end + 2
            if literal:  # like Go, a repetition after \E applies to the last character only
                self.out.append(re.escape(literal[:-1]))
                self.atom(re.escape(literal[-1]))
            return
        if c in "AzbB":
            self.pos += 2
            self.assertion({"A": r"\A", "z": r"\Z", "b": r"(?a:\b)", "B": r"(?a:\B)"}[c])
            return
        if c.lower() in _PERL_CLASSES:
            self.pos += 2
            self.atom(_class_text(_PERL_CLASSES[c.lower()], negated=c.isupper()))
            return
        self.atom(re.escape(self.escaped_char()))

    def escaped_char(self) -> str:
        """A single-character escape at self.pos (backslash included); advances past it."""
        start = self.pos
        c = self.peek(1)
        self.pos += 2
        if c in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[c]
        if c == "x":
            m = re.compile(r"\{([0-9A-Fa-f]+)\}|([0-9A-Fa-f]{2})").match(self.src, self.pos)
            if m is None:
                raise self.fail("invalid hex escape", start)
            self.pos = m.end()
            code = int(m.group(1) or m.group(2), 16)
            if code > 0x10FFFF:
                raise self.fail("invalid hex escape", start)
            return chr(code)
        if c in "01234567":
            m = re.compile(r"[0-7]{0,2}").match(self.src, self.pos)
            digits = c + (m.group(0) if m else "")
            if c != "0" and len(digits) == 1:
                raise self.fail(f"backreference \\{c} is not supported by Go's regexp (RE2)", start)
            self.pos = start + 1 + len(digits)
            return chr(int(digits, 8))
        if c in "pP":
            raise self.fail(
                f"Unicode class \\{c}… cannot be translated to Python's re; use an explicit class", start
            )
        if not c.isalnum() and ord(c) < 0x80:
            return c
        raise self.fail(f"invalid escape sequence \\{c}", start)

    # -- character classes -----------------------------------------------------------------------------
    def char_class(self) -> str:
        start = self.pos
        self.pos += 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        positive: Ranges = []
        negated_sets: list[Ranges] = []
        first = True
        while True:
            c = self.peek()
            if c == "":
                raise self.fail("missing closing ]", start)
            if c == "]" and not first:
                self.pos += 1
                break
            first = False
            posix = re.compile(r"\[:(\^?)([a-z]+):\]").match(self.src, self.pos)
            if posix:
                if posix.group(2) not in _POSIX_CLASSES:
                    raise self.fail(f"invalid character class range {posix.group(0)}")
                self.pos = posix.end()
                self.add_set(_POSIX_CLASSES[posix.group(2)], bool(posix.group(1)), positive, negated_sets)
                continue
            if c == "\\" and self.peek(1).lower() in _PERL_CLASSES:
                letter = self.peek(1)
                self.pos += 2
                self.add_set(_PERL_CLASSES[letter.lower()], letter.isupper(), positive, negated_sets)
                continue
            lo = self.class_char()
            hi = lo
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 1
                hi = self.class_char()
                if hi < lo:
                    raise self.fail(f"invalid character class range {lo}-{hi}")
            positive.append((lo, hi))
        return _class_expression(positive, negated_sets, negated)

    def class_char(self) -> str:
        if self.peek() == "\\":
            if self.peek(1) in "bBAzQ" or self.peek(1).lower() in _PERL_CLASSES:
                raise self.fail(f"invalid escape \\{self.peek(1)} in character class")
            return self.escaped_char()
        c = self.peek()
        self.pos += 1
        return c

    @staticmethod
    def add_set(ranges: Ranges, negated: bool, positive: Ranges, negated_sets: list[Ranges]) -> None:
        if negated:
            negated_sets.append(ranges)
        else:
            positive.extend(ranges)


def _escape_in_class(c: str) -> str:
    return "\\" + c if c in "\\]^-[&|~" else re.escape(c) if c in "\t\n\r\f\v" else c


def _ranges_text(ranges: Ranges) -> str:
    return "".join(
        _escape_in_class(lo) if lo == hi else f"{_escape_in_class(lo)}-{_escape_in_class(hi)}"
        for lo, hi in ranges
    )


def _class_text(ranges: Ranges, negated: bool) -> str:
    return "[" + ("^" if negated else "") + _ranges_text(ranges) + "]"


def _class_expression(positive: Ranges, negated_sets: list[Ranges], negated: bool) -> str:
    """A class with negated members (`[a\\D]`, `[[:^alpha:]]`) becomes an alternation of plain classes."""
    if not negated_sets:
        return _class_text(positive, negated)
    parts = ([_class_text(positive, False)] if positive else []) + [
        _class_text(n, True) for n in negated_sets
    ]
    union = "(?:" + "|".join(parts) + ")"
    return f"(?:(?!{union})(?s:.))" if negated else union


def translate(pattern: str) -> str:
    """The Python `re` source equivalent to the Go regexp `pattern`; RegexError if Go would reject it."""
    return _Translator(pattern).translate()


@functools.lru_cache(maxsize=4096)
def compile_re2(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(translate(pattern))
    except re.error as err:  # a translation gap: say so rather than matching differently
        raise RegexError(pattern, err.pos or 0, f"cannot be translated to Python's re ({err.msg})") from err
