"""Typed values to JSON and back, by their dataclass type hints: how a resolved document crosses a process boundary.

Supports what winsuite's documents are made of: dataclasses, enums, str/int/float/bool/None, Path, date, tuples,
lists, frozensets, dicts with string keys and unions of those. Decoding checks every value against its type and
names the field of a value that does not fit, so a hand-edited or truncated document is one clear error.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import functools
import types
import typing
from pathlib import Path
from typing import Any


class DocumentError(ValueError):
    """A value does not fit its field's type; `field` is its path in the document (e.g. job.cluster.type)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}" if field else problem)
        self.field = field
        self.problem = problem


def encode(value: Any) -> Any:
    """`value` as JSON-ready data (dataclasses as objects of their fields, enums as their values)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, frozenset | set):
        return sorted(encode(v) for v in value)
    if isinstance(value, tuple | list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    return value


def decode(kind: Any, raw: Any, field: str = "") -> Any:
    """The value of type `kind` that `encode` made `raw` from; DocumentError names the field that does not fit."""
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        return _decode_union(typing.get_args(kind), raw, field)
    if kind is Any:
        return raw
    if kind is type(None):
        return _expect(raw is None, raw, "null", field, None)
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        return _decode_dataclass(kind, raw, field)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        try:
            return kind(raw)
        except ValueError:
            allowed = ", ".join(str(m.value) for m in kind)
            raise DocumentError(field, f"got {raw!r}; allowed: {allowed}") from None
    if origin in (tuple, list, frozenset):
        return _decode_sequence(origin, typing.get_args(kind), raw, field)
    if origin is dict:
        _expect(isinstance(raw, dict), raw, "an object", field, None)
        value_kind = typing.get_args(kind)[1]
        return {str(k): decode(value_kind, v, f"{field}.{k}") for k, v in raw.items()}
    return _decode_scalar(kind, raw, field)


def _decode_union(arms: tuple[Any, ...], raw: Any, field: str) -> Any:
    if raw is None and type(None) in arms:
        return None
    problems = []
    for arm in arms:
        if arm is type(None):
            continue
        try:
            return decode(arm, raw, field)
        except DocumentError as err:
            problems.append(err.problem)
    raise DocumentError(field, "; ".join(dict.fromkeys(problems)))


def _decode_dataclass(kind: type, raw: Any, field: str) -> Any:
    _expect(isinstance(raw, dict), raw, f"an object ({kind.__name__})", field, None)
    hints = _hints(kind)
    known = {f.name for f in dataclasses.fields(kind) if f.init}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise DocumentError(_join(field, unknown[0]), f"unknown field; known fields: {', '.join(sorted(known))}")
    values = {name: decode(hints[name], value, _join(field, name)) for name, value in raw.items()}
    try:
        return kind(**values)
    except TypeError as err:  # a required field missing
        raise DocumentError(field, str(err)) from None


def _decode_sequence(origin: type, args: tuple[Any, ...], raw: Any, field: str) -> Any:
    _expect(isinstance(raw, list), raw, "a list", field, None)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return tuple(decode(args[0], v, f"{field}[{i}]") for i, v in enumerate(raw))
    if origin is tuple:
        _expect(len(raw) == len(args), raw, f"a list of {len(args)}", field, None)
        return tuple(decode(a, v, f"{field}[{i}]") for i, (a, v) in enumerate(zip(args, raw, strict=True)))
    items = [decode(args[0], v, f"{field}[{i}]") for i, v in enumerate(raw)]
    return frozenset(items) if origin is frozenset else items


def _decode_scalar(kind: Any, raw: Any, field: str) -> Any:
    if kind is bool:
        return _expect(isinstance(raw, bool), raw, "true or false", field, raw)
    if kind is int:
        return _expect(isinstance(raw, int) and not isinstance(raw, bool), raw, "a whole number", field, raw)
    if kind is float:
        ok = isinstance(raw, int | float) and not isinstance(raw, bool)
        return float(_expect(ok, raw, "a number", field, raw))
    if kind is str:
        return _expect(isinstance(raw, str), raw, "a string", field, raw)
    if kind is Path:
        return Path(_expect(isinstance(raw, str), raw, "a path", field, raw))
    if kind is datetime.date:
        _expect(isinstance(raw, str), raw, "a date (YYYY-MM-DD)", field, raw)
        try:
            return datetime.date.fromisoformat(raw)
        except ValueError:
            raise DocumentError(field, f"expected a date (YYYY-MM-DD), got {raw!r}") from None
    raise TypeError(f"document_codec cannot decode {kind!r} ({field})")


def _expect(ok: bool, raw: Any, what: str, field: str, value: Any) -> Any:
    if not ok:
        shown = repr(raw) if len(repr(raw)) <= 60 else repr(raw)[:57] + "..."
        raise DocumentError(field, f"expected {what}, got {shown}")
    return value


@functools.cache
def _hints(kind: type) -> dict[str, Any]:
    return typing.get_type_hints(kind)


def _join(field: str, name: str) -> str:
    return f"{field}.{name}" if field else name
