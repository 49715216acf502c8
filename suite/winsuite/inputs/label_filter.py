"""ginkgo's --label-filter language (types/label_filter.go of ginkgo v2), over a test's labels.

`!` binds tightest, then `&&`, then `||` (a `,` is `||`); parentheses group. A bare word matches a label without
regard to case; `/re/` matches when the Go regex matches any label; `key: op {a, b}` looks at the values of
`key:value` labels, with op one of isEmpty, containsAny, containsAll, consistsOf, isSubsetOf. For winsuite tests
the labels are their tags; for upstream specs, the bracketed tags of their names (what e2e.test labels them with).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Sequence

from winsuite.inputs.regex import RegexError
from winsuite.inputs.regex import compile_re2

Filter = Callable[[Sequence[str]], bool]
SET_OPERATIONS = {"isempty": "isEmpty", "containsany": "containsAny", "containsall": "containsAll",
                  "consistsof": "consistsOf", "issubsetof": "isSubsetOf"}


class LabelFilterError(ValueError):
    def __init__(self, text: str, position: int, problem: str) -> None:
        super().__init__(f"invalid label filter {text!r} at offset {position}: {problem}")


@dataclasses.dataclass(frozen=True)
class _Token:
    kind: str  # "&&", "||", "!", "(", ")", "label", "regex", "set", "eof"
    value: str
    position: int
    operation: str = ""  # for "set": the set operation
    arguments: tuple[str, ...] = ()


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i = 0
    while True:
        while i < len(text) and text[i] == " ":
            i += 1
        if i >= len(text):
            tokens.append(_Token("eof", "", i))
            return tokens
        char = text[i]
        if char in "&|":
            if text[i + 1:i + 2] != char:
                raise LabelFilterError(text, i, f"invalid token '{char}'; did you mean '{char * 2}'?")
            tokens.append(_Token(char * 2, char * 2, i))
            i += 2
        elif char == ",":
            tokens.append(_Token("||", ",", i))
            i += 1
        elif char in "!()":
            tokens.append(_Token(char, char, i))
            i += 1
        elif char == "/":
            end = text.find("/", i + 1)
            end = len(text) if end < 0 else end
            tokens.append(_Token("regex", text[i + 1:end], i))
            i = end + 1
        else:
            token, i = _word(text, i)
            tokens.append(token)


def _word(text: str, start: int) -> tuple[_Token, int]:
    """A label, or a set operation `key: op {args}` (a colon followed by a space starts one)."""
    i = start
    while i < len(text) and text[i] not in "&|!,()/:":
        i += 1
    value = text[start:i].strip()
    if i < len(text) and text[i] == ":":
        if text[i + 1:i + 2] == " ":
            if not value:
                raise LabelFilterError(text, i, "missing set key")
            return _set_operation(text, value, start, i + 1)
        end = i
        while end < len(text) and text[end] not in "&|!,()/":
            end += 1
        value += text[i:end].strip()
        i = end
    for operation, spelled in SET_OPERATIONS.items():
        if value.lower().find(" " + operation) > 0:
            raise LabelFilterError(text, start, f"set operation '{spelled}' without a set key; forgot the ':'?")
    return _Token("label", value, start), i


def _set_operation(text: str, key: str, start: int, i: int) -> tuple[_Token, int]:
    while i < len(text) and text[i] == " ":
        i += 1
    end = i
    while end < len(text) and text[end] not in " )":
        end += 1
    operation = text[i:end].lower()
    if operation not in SET_OPERATIONS:
        raise LabelFilterError(text, i, f"invalid set operation '{text[i:end]}'")
    i = end
    while i < len(text) and text[i] == " ":
        i += 1
    if i < len(text) and text[i] == "{":
        close = text.find("}", i)
        if close < 0:
            raise LabelFilterError(text, i, "missing closing '}' in the set operation's argument")
        raw, i = text[i + 1:close], close + 1
    else:
        end = i
        while end < len(text) and text[end] not in "&|!,()/":
            end += 1
        raw, i = text[i:end].strip(), end
    arguments = tuple(a.strip().lower() for a in raw.split(",")) if raw.strip() else ()
    if operation == "isempty" and arguments:
        raise LabelFilterError(text, i, f"isEmpty takes no argument (given '{raw}')")
    if operation != "isempty" and not arguments:
        raise LabelFilterError(text, i, f"set operation '{SET_OPERATIONS[operation]}' needs an argument")
    return _Token("set", key, start, operation, arguments), i


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self) -> _Token:
        return self.tokens[self.at]

    def take(self) -> _Token:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def parse(self) -> Filter:
        result = self.disjunction()
        token = self.peek()
        if token.kind != "eof":
            problem = "mismatched ')'" if token.kind == ")" else "two labels need an operator between them"
            raise LabelFilterError(self.text, token.position, problem)
        return result

    def disjunction(self) -> Filter:
        terms = [self.conjunction()]
        while self.peek().kind == "||":
            self.take()
            terms.append(self.conjunction())
        return terms[0] if len(terms) == 1 else lambda labels: any(term(labels) for term in terms)

    def conjunction(self) -> Filter:
        factors = [self.negation()]
        while self.peek().kind == "&&":
            self.take()
            factors.append(self.negation())
        return factors[0] if len(factors) == 1 else lambda labels: all(factor(labels) for factor in factors)

    def negation(self) -> Filter:
        if self.peek().kind == "!":
            self.take()
            inner = self.negation()
            return lambda labels: not inner(labels)
        return self.operand()

    def operand(self) -> Filter:
        token = self.take()
        if token.kind == "(":
            if self.peek().kind == ")":
                raise LabelFilterError(self.text, token.position, "empty '()' group")
            inner = self.disjunction()
            if self.take().kind != ")":
                raise LabelFilterError(self.text, token.position, "missing ')'")
            return inner
        if token.kind == "label":
            wanted = token.value.lower()
            return lambda labels: any(label.lower() == wanted for label in labels)
        if token.kind == "regex":
            try:
                regex = compile_re2(token.value)
            except RegexError as err:
                raise LabelFilterError(self.text, token.position, f"/{token.value}/: {err.problem}") from None
            return lambda labels: any(regex.matches(label) for label in labels)
        if token.kind == "set":
            return _set_filter(token)
        where = "at the end" if token.kind == "eof" else f"'{token.value}'"
        raise LabelFilterError(self.text, token.position, f"expected a label, '/regex/', '!' or '(' {where}")


def _set_filter(token: _Token) -> Filter:
    key, wanted = token.value.strip().lower(), set(token.arguments)

    def values(labels: Sequence[str]) -> set[str]:
        pairs = (label.split(":", 1) for label in labels if ":" in label)
        return {value.strip().lower() for name, value in pairs if name.strip().lower() == key}

    checks: dict[str, Filter] = {
        "isempty": lambda labels: not values(labels),
        "containsany": lambda labels: bool(values(labels) & wanted),
        "containsall": lambda labels: wanted <= values(labels),
        "consistsof": lambda labels: values(labels) == wanted,
        "issubsetof": lambda labels: values(labels) <= wanted,
    }
    return checks[token.operation]


def parse_label_filter(text: str) -> Filter:
    """The filter of an expression; an empty one selects everything (as in ginkgo)."""
    if not text.strip():
        return lambda labels: True
    return _Parser(text).parse()
