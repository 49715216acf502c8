"""Where ginkgo containers and specs sit in a Go test file: each `It`/`Describe`-like call's string literals and the
lines its parentheses span, found by scanning Go's tokens (strings, raw strings, runes and comments skipped), and
the lines of each `func` declaration. Enough to check that a cited line range lies inside a named spec."""

from __future__ import annotations

import dataclasses
import re

# The calls ginkgo and the e2e framework declare containers and specs with (framework.ConformanceIt, f.It,
# ginkgo.Describe, SIGDescribe, sigDescribe, …).
CALL = re.compile(r"\b(?:[A-Za-z_][\w]*\.)?(ConformanceIt|It|FIt|Describe|FDescribe|SIGDescribe|sigDescribe|Context|"
                  r"When|DescribeTable|Entry)\(")
FUNC = re.compile(r"^func (?:\([^)]*\) )?([A-Za-z_]\w*)", re.MULTILINE)
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"|`([^`]*)`')


@dataclasses.dataclass(frozen=True)
class Call:
    name: str  # It, Describe, …
    literals: tuple[str, ...]  # the string literals before its body (`func(`), in order
    first_line: int
    last_line: int

    def contains(self, first: int, last: int) -> bool:
        return self.first_line <= first and last <= self.last_line


def _skip(text: str, at: int) -> int:
    """The index after the string, raw string, rune or comment starting at `at` (or `at` when none starts there)."""
    two = text[at:at + 2]
    if two == "//":
        end = text.find("\n", at)
        return len(text) if end < 0 else end
    if two == "/*":
        end = text.find("*/", at + 2)
        return len(text) if end < 0 else end + 2
    quote = text[at]
    if quote == "`":
        end = text.find("`", at + 1)
        return len(text) if end < 0 else end + 1
    if quote in "\"'":
        index = at + 1
        while index < len(text) and text[index] != quote:
            index += 2 if text[index] == "\\" else 1
        return index + 1
    return at


def _closing(text: str, open_paren: int) -> int:
    """The index of the parenthesis that closes the one at `open_paren`."""
    depth, index = 0, open_paren
    while index < len(text):
        skipped = _skip(text, index)
        if skipped != index:
            index = skipped
            continue
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    raise ValueError(f"unbalanced parenthesis at offset {open_paren}")


def _in_code(text: str, at: int, code_until: list[int]) -> bool:
    """Whether offset `at` is code, not inside a string or comment (scanning from the last known code offset)."""
    index = code_until[0]
    while index < at:
        skipped = _skip(text, index)
        if skipped != index:
            if skipped > at:
                code_until[0] = skipped
                return False
            index = skipped
            continue
        index += 1
    code_until[0] = index
    return True


def calls(text: str) -> list[Call]:
    """Every It/Describe-like call of the file, with the lines it spans (1-based, inclusive)."""
    found = []
    code_until = [0]
    for match in CALL.finditer(text):
        if not _in_code(text, match.start(), code_until):
            continue
        open_paren = match.end() - 1
        close = _closing(text, open_paren)
        body = text.find("func(", open_paren, close)
        head = text[open_paren:body if body >= 0 else close]
        literals = tuple(a or b for a, b in LITERAL.findall(head))
        found.append(Call(match.group(1), literals, text.count("\n", 0, match.start()) + 1,
                          text.count("\n", 0, close) + 1))
    return found


def func_lines(text: str) -> dict[str, int]:
    """Each top-level func (or method) name and the line it is declared on."""
    return {match.group(1): text.count("\n", 0, match.start()) + 1 for match in FUNC.finditer(text)}
