"""The mutations that make a malformed input of each kind from its seeds (tests/tools/fuzz_inputs.py): text edits
that break the encoding or YAML, structural edits of the parsed document, the special and path cases, and broken
results files."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import yaml

from tests.tools.fuzz_inputs import PATH_CASES
from tests.tools.fuzz_inputs import RESULT_FILES
from tests.tools.fuzz_inputs import SPECIAL
from tests.tools.fuzz_inputs import Case
from tests.tools.fuzz_inputs import Kind
from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import STARTED

BAD_VALUES = ("!!int abc", "!!bool maybe", "2026-13-45", "!!float x", "!!timestamp nope", "!!binary '@@@'",
              "!!python/object:os.system x", "&a [*a]")
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8))
_TOP_KEY = re.compile(rb"(?m)^([A-Za-z][\w-]*):(?: .*)?$")
_KEY_VALUE = re.compile(rb"(?m)^(\s*(?:- )?[A-Za-z][\w-]*): (\S.*)$")


def mutate(kind: Kind, rng: random.Random) -> Case:
    """One malformed input of `kind`, chosen and built from `rng` (deterministic for a seeded rng)."""
    if kind.name.startswith("results"):
        return _mutate_results(kind, rng)
    seed = rng.choice(kind.seeds())
    name = rng.choice(_TEXT_MUTATIONS + _STRUCTURAL + SPECIAL + PATH_CASES)
    if name in PATH_CASES:
        return path_case(kind, name)
    if name in SPECIAL:
        return Case(kind.name, name, True)
    if name in _STRUCTURAL:
        return _structural(kind, name, seed, rng)
    data, bad = _TEXT[name](seed, rng)
    return Case(kind.name, name, bad, data)


def path_case(kind: Kind, name: str) -> Case:
    """A valid input of `kind` (its first example) at a path that cannot be read."""
    assert name in PATH_CASES
    return Case(kind.name, name, True, kind.seeds()[0])


def _insert(data: bytes, rng: random.Random, piece: bytes) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + piece + data[at:]


def _latin1(seed: bytes, rng: random.Random) -> tuple[bytes, bool]:
    return _insert(seed, rng, b"caf\xe9"), True


def _nul(seed: bytes, rng: random.Random) -> tuple[bytes, bool]:
    return _insert(seed, rng, b"a\0b"), True


def _duplicate_key(seed: bytes, rng: random.Random) -> tuple[bytes, bool]:
    keys = _TOP_KEY.findall(seed)
    if not keys:
        return seed + b"\nx: 1\nx: 2\n", True
    return seed.rstrip(b"\n") + b"\n" + rng.choice(keys) + b": duplicate\n", True


def _bad_value(seed: bytes, rng: random.Random) -> tuple[bytes, bool]:
    lines = list(_KEY_VALUE.finditer(seed))
    value = rng.choice(BAD_VALUES).encode()
    if not lines:
        return seed + b"\nbad: " + value + b"\n", True
    line = rng.choice(lines)
    return seed[: line.start(2)] + value + seed[line.end(2):], not _continues(seed, line)


def _continues(seed: bytes, line: re.Match[bytes]) -> bool:
    """Whether the value goes on over the next, deeper indented line (a multi-line plain scalar, as ops-readiness
    descriptions are): a bad first line is then only the start of a good string."""
    following = seed[line.end():].lstrip(b"\n").split(b"\n", 1)[0]
    key_column = len(line.group(1)) - len(line.group(1).lstrip(b" -"))
    indent = len(following) - len(following.lstrip(b" "))
    return bool(following.strip()) and indent > key_column and _KEY_VALUE.match(following) is None


def _deep(seed: bytes, rng: random.Random) -> tuple[bytes, bool]:
    depth = rng.choice((200, 2000, 20000))
    lines = list(_KEY_VALUE.finditer(seed))
    value = b"[" * depth + b"x" + b"]" * depth
    if not lines:
        return seed + b"\ndeep: " + value + b"\n", True
    line = rng.choice(lines)
    return seed[: line.start(2)] + value + seed[line.end(2):], depth > 200


def _alias_bomb(seed: bytes, rng: random.Random) -> tuple[bytes, bool]:
    return ALIAS_BOMB.encode(), True


def _alias_bomb_in_field(seed: bytes, rng: random.Random) -> tuple[bytes, bool]:
    """A bomb where a value belongs: 9^8 elements through 72 aliases, under the alias limit; only printing
    the value in full would explode."""
    lines = list(_KEY_VALUE.finditer(seed))
    anchors = "[" + ", ".join(["x"] * 9) + "]"
    for level in range(1, 9):
        anchors = "[" + ", ".join([f"&l{level - 1} {anchors}" if i == 0 else f"*l{level - 1}"
                                   for i in range(9)]) + "]"
    value = anchors.encode()
    if not lines:
        return seed + b"\nbomb: " + value + b"\n", True
    line = rng.choice(lines)
    return seed[: line.start(2)] + value + seed[line.end(2):], True


def _byte_noise(seed: bytes, rng: random.Random) -> tuple[bytes, bool]:
    data = bytearray(seed)
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(3)
        at = rng.randrange(len(data) + 1)
        if op == 0 and at < len(data):
            data[at] = rng.randrange(32, 127)
        elif op == 1:
            data[at:at] = bytes([rng.choice(b":-[]{}&*!|>'\"#%@` \t\n")])
        else:
            del data[at : at + rng.randint(1, 20)]
    return bytes(data), False


def _truncate(seed: bytes, rng: random.Random) -> tuple[bytes, bool]:
    return seed[: rng.randrange(len(seed) + 1)], False


def _tabs(seed: bytes, rng: random.Random) -> tuple[bytes, bool]:
    indented = [m.start() for m in re.finditer(rb"(?m)^  \S", seed)]
    if not indented:
        return seed, False
    at = rng.choice(indented)
    return seed[:at] + b"\t" + seed[at + 2:], True  # YAML forbids tabs in indentation


_TEXT: dict[str, Callable[[bytes, random.Random], tuple[bytes, bool]]] = {
    "latin1": _latin1, "nul": _nul, "duplicate-key": _duplicate_key, "bad-value": _bad_value, "deep": _deep,
    "alias-bomb": _alias_bomb, "alias-bomb-in-field": _alias_bomb_in_field, "byte-noise": _byte_noise,
    "truncate": _truncate, "tabs": _tabs,
}
_TEXT_MUTATIONS = tuple(_TEXT)
_STRUCTURAL = ("type-swap", "drop-key", "unknown-key", "empty-document", "wrong-top-level")


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if path else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += _leaves(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _leaves(value, (*path, index))
    return found


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        node = node[step]
    return node


def _structural(kind: Kind, name: str, seed: bytes, rng: random.Random) -> Case:
    doc = yaml.safe_load(seed)
    if name == "empty-document":
        return Case(kind.name, name, not kind.empty_ok, rng.choice((b"", b"# nothing\n", b"~\n", b"---\n")))
    if name == "wrong-top-level":
        return Case(kind.name, name, True, rng.choice((b"- a\n- b\n", b"just a string\n", b"42\n", b"[]\n")))
    if name == "unknown-key":
        doc["zzUnknownField"] = rng.choice((1, "x", [1], {"a": 1}))
        return Case(kind.name, name, kind.strict_keys, _dump(doc))
    leaves = _leaves(doc)
    path = rng.choice(leaves)
    parent, last = _get(doc, path[:-1]), path[-1]
    if name == "drop-key":
        del parent[last]
        return Case(kind.name, name, False, _dump(doc))
    old = parent[last]
    new = rng.choice((None, 0, -1, 10**400, 1.5, True, "", "x", "a\0b", [], ["a"], [[["a"]]], {}, {"k": "v"},
                      "9" * 400))
    parent[last] = new
    # A string turned into a list or mapping is wrong whatever the field (unless the field takes a list).
    bad = (isinstance(old, str) and isinstance(new, dict | list)
           and not (isinstance(new, list) and str(last) in kind.list_fields)
           and path[0] != "metadata")
    return Case(kind.name, f"{name}:{'.'.join(map(str, path))[:60]}", bad, _dump(doc))


def _dump(doc: Any) -> bytes:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=10**6).encode()


def _mutate_results(kind: Kind, rng: random.Random) -> Case:
    target = rng.choice(RESULT_FILES)
    if target.endswith(".xml"):
        options: dict[str, tuple[bytes, bool]] = {
            "bogus-encoding": (b'<?xml version="1.0" encoding="bogus-enc"?><testsuites/>', True),
            "entity-bomb": (b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
                            + b"".join(b'<!ENTITY %c "%s">' % (98 + i, (b"&%c;" % (97 + i)) * 10) for i in range(8))
                            + b']><testsuites><testsuite name="&i;"/></testsuites>', True),
            "truncated": (b'<?xml version="1.0"?><testsuites><testsuite name="x"><testcase na', True),
            "wrong-root": (b"<html><body/></html>", True),
            "latin1": (b'<testsuites><testsuite><testcase name="caf\xe9"/></testsuite></testsuites>', True),
            "deep": (b"<testsuites>" + b"<a>" * 100000 + b"</a>" * 100000 + b"</testsuites>", False),
        }
    else:
        timed = target in (STARTED, FINISHED)  # metadata.json has no timestamp: a number there is just a value
        options = {
            "infinity": (b'{"timestamp": Infinity}', True),
            "nan": (b'{"timestamp": NaN, "passed": true}', True),
            "huge-number": (b'{"timestamp": 1e300}', timed),
            "negative": (b'{"timestamp": -5}', timed),
            "deep": (b'{"metadata": ' + b"[" * 5000 + b"]" * 5000 + b"}", True),
            "not-object": (rng.choice((b"[]", b"42", b'"x"', b"null")), True),
            "latin1": (b'{"job": "caf\xe9"}', True),
            "truncated": (b'{"timestamp": 17', True),
        }
    name = rng.choice(sorted(options) + list(SPECIAL) + list(PATH_CASES))
    if name in PATH_CASES:
        return path_case(kind, name)
    if name in SPECIAL:  # a build without JUnit (or metadata.json, or finished.json while running) is valid
        optional = target != STARTED and name in ("missing", "directory")
        return Case(kind.name, name, not optional, target=target)
    data, bad = options[name]
    return Case(kind.name, name, bad, data, target)
