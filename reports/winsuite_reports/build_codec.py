"""A parsed build as the report cache stores it, and back: compact strings (worker processes hand parses back the
same way: strings cross a process boundary far faster than objects); a stored build's rows decoded only when read."""

from __future__ import annotations

import functools
import itertools
import json
import operator
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sized
from pathlib import Path

from winsuite_reports.evidence import BuildEvidence
from winsuite_reports.evidence import decode_failures
from winsuite_reports.evidence import decode_ran_on
from winsuite_reports.evidence import encode_failures
from winsuite_reports.evidence import encode_ran_on
from winsuite_reports.model import PASS
from winsuite_reports.model import Cell
from winsuite_reports.model import Lazy
from winsuite_reports.model import LazyCells
from winsuite_reports.model import RowInfo
from winsuite_reports.model import Status
from winsuite_reports.prow import Outcome
from winsuite_reports.prow import ParsedBuild
from winsuite_reports.prow import parse_build

PASS_SEPARATOR = "\0"
# A parsed build as the cache stores it: header, passes, other cells, rows, failures, where the rows ran.
Encoded = tuple[str, str, str, str, str, str]
_STATUS = {status.value: status for status in Status}  # a dict lookup: Status(value) is an Enum call
# Anything a stored entry could raise while decoding: it is then read from its files again.
UNDECODABLE = (ValueError, TypeError, KeyError, IndexError, AttributeError)


def encode(parsed: ParsedBuild) -> Encoded:
    """A parse as the cache stores it (and as worker processes hand it back: strings travel faster than objects)."""
    outcome = None if parsed.outcome is None else [parsed.outcome.passed, parsed.outcome.result]
    header = {
        "started": parsed.started,
        "finished": parsed.finished,
        "outcome": outcome,
        "malformed": list(parsed.malformed),
        "metadata": dict(parsed.metadata),
        "excluded": parsed.excluded,
        "counts": {status.value: n for status, n in parsed.counts.items()},
    }
    # Most cells of a history are plain passes: their names, NUL-separated (XML cannot hold a NUL), split in one
    # C call, faster than a JSON list of a thousand strings.
    # The passes are told apart by identity in C (a big build has a hundred thousand); a Cell's == is Python.
    cells = parsed.cells
    identical = list(map(operator.is_, cells.values(), itertools.repeat(PASS)))
    passes = list(itertools.compress(cells, identical))
    others: dict[str, list[object]] = {}
    for key in itertools.compress(cells, map(operator.not_, identical)):
        cell = cells[key]
        if cell == PASS:
            passes.append(key)
        else:
            others[key] = cell.fields()
    joined = PASS_SEPARATOR.join(passes)
    if joined.count(PASS_SEPARATOR) != max(len(passes) - 1, 0):  # a name holding the separator: kept as a cell
        others.update((key, PASS.fields()) for key in passes if PASS_SEPARATOR in key)
        joined = PASS_SEPARATOR.join(key for key in passes if PASS_SEPARATOR not in key)
    found = parsed.evidence
    return (dumps(header), joined, dumps(others), encode_rows(parsed.rows, plain=parsed.plain_rows),
            encode_failures(found.failures), encode_ran_on(found.ran_on))


def decode(build_dir: Path, header_text: str, cells: tuple[str, str] | Callable[[], tuple[str, str] | None], *,
           rows: str | Callable[[], str],
           stored_evidence: tuple[str, str] | Callable[[], tuple[str, str] | None]) -> ParsedBuild:
    """A stored parse; its cells (passes, other cells), row facts and evidence are decoded when first asked for
    (from the build's files again should they not decode)."""
    header = json.loads(header_text)
    outcome = header["outcome"]
    return ParsedBuild(
        id=build_dir.name,
        started=int(header["started"]),
        finished=header["finished"],
        outcome=None if outcome is None else Outcome(outcome[0], str(outcome[1])),
        malformed=tuple(header["malformed"]),
        metadata=dict(header["metadata"]),
        counts={_STATUS[status]: int(n) for status, n in header["counts"].items()},
        excluded=dict(header["excluded"]),
        rows=_StoredRows(rows, build_dir),
        cell_source=LazyCells(lambda: _decode_cells(cells() if callable(cells) else cells, build_dir)),
        evidence_source=Lazy(lambda: _decode_evidence(
            stored_evidence() if callable(stored_evidence) else stored_evidence, build_dir)),
    )


def _decode_evidence(stored: tuple[str, str] | None, build_dir: Path) -> BuildEvidence:
    try:
        if stored is not None:
            return BuildEvidence(decode_failures(stored[0]), decode_ran_on(stored[1]))
    except UNDECODABLE:
        pass
    return parse_build(build_dir).evidence


def _decode_cells(stored: tuple[str, str] | None, build_dir: Path) -> dict[str, Cell]:
    if stored is None:  # the entry is gone or was rewritten since it was checked
        return parse_build(build_dir).cells
    try:
        passes, cells_text = stored
        others = json.loads(cells_text)
        cells: dict[str, Cell] = dict.fromkeys(passes.split(PASS_SEPARATOR) if passes else (), PASS)
        for key, fields in others.items():
            cells[key] = Cell.of_fields(fields)
        return cells
    except UNDECODABLE:
        return parse_build(build_dir).cells


def encode_rows(rows: Mapping[str, RowInfo], *, plain: int = 0) -> str:
    """Row facts column by column, each column's values joined in one C call (a big build has a hundred thousand
    rows): values NUL-separated, a list's items US-separated, a column whose values are all empty stored as "" (most
    rows of upstream runs have no facts but their tags). XML, where every row's facts come from, can hold none of
    these characters; facts that hold one anyway are stored as JSON. The first `plain` rows are known to have no
    facts but their names' tags (a big run's plain passes): only the others are looked at for the other columns."""
    infos = list(rows.values())
    others = infos[plain:]
    tags = list(map(_TAGS, infos))
    items = list(map(_PLAN_ITEMS, infos)) if any(map(_PLAN_ITEMS, others)) else []
    columns: list[Iterable[str]] = [list(rows), map(_ITEM_SEPARATOR.join, tags), map(_TIER, infos),
                                    map(_CATEGORY, infos), map(_ITEM_SEPARATOR.join, items), map(_EXCLUDED, infos),
                                    map(_ENGINE, infos), map(_CASE, infos)]
    filled = [True, any(tags), any(map(_TIER, others)), any(map(_CATEGORY, others)), bool(items),
              any(map(_EXCLUDED, others)), any(map(_ENGINE, others)), any(map(_CASE, others))]
    text = _COLUMN_SEPARATOR.join(_ROW_SEPARATOR.join(column) if full else ""
                                  for column, full in zip(columns, filled, strict=True))
    lists = sum(map(len, tags)) + sum(map(len, items)) - sum(map(bool, tags)) - sum(map(bool, items))
    if (text.count(_ROW_SEPARATOR) != sum(filled) * max(len(infos) - 1, 0)
            or text.count(_COLUMN_SEPARATOR) != len(_ROW_COLUMNS) - 1 or text.count(_ITEM_SEPARATOR) != lists
            or tags.count(_ONE_EMPTY) or items.count(_ONE_EMPTY)  # a list of one "" would read back as none
            or text.startswith(_JSON_MARK)):
        return _JSON_MARK + dumps({key: [list(info.tags), info.tier, info.category, list(info.plan_items),
                                         info.excluded, info.engine, info.case] for key, info in rows.items()})
    return text if infos else ""


def decode_rows(text: str) -> dict[str, RowInfo]:
    """Stored row facts; one of UNDECODABLE when the text is not such facts."""
    if text.startswith(_JSON_MARK):  # facts stored as JSON (see encode_rows)
        return {
            key: RowInfo(key, tuple(tags), tier, category, tuple(items), excluded, engine, case)
            for key, (tags, tier, category, items, excluded, engine, case) in json.loads(text[1:]).items()
        }
    if not text:
        return {}
    columns = text.split(_COLUMN_SEPARATOR)
    if len(columns) != len(_ROW_COLUMNS):
        raise ValueError("stored row facts have another number of columns")
    keys = columns[0].split(_ROW_SEPARATOR)
    tags, tier, category, items, excluded, engine, case = (_stored_column(column, len(keys)) for column in columns[1:])
    infos = map(RowInfo, keys, map(_items, tags), tier, category, map(_items, items), excluded, engine, case)
    return dict(zip(keys, infos, strict=True))


def _stored_column(text: str, rows: int) -> Iterable[str]:
    """A stored column's values: "" is a column of empty values."""
    if not text:
        return itertools.repeat("", rows)
    values = text.split(_ROW_SEPARATOR)
    if len(values) != rows:
        raise ValueError("a stored row facts column has another number of rows")
    return values


_ROW_COLUMNS = ("key", "tags", "tier", "category", "plan_items", "excluded", "engine", "case")
_ROW_SEPARATOR, _ITEM_SEPARATOR, _COLUMN_SEPARATOR, _JSON_MARK = "\0", "\x1f", "\x1e", "\x1d"
_ONE_EMPTY = ("",)
_TAGS, _PLAN_ITEMS = operator.attrgetter("tags"), operator.attrgetter("plan_items")
_TIER, _CATEGORY = operator.attrgetter("tier"), operator.attrgetter("category")
_EXCLUDED, _ENGINE, _CASE = operator.attrgetter("excluded"), operator.attrgetter("engine"), operator.attrgetter("case")


@functools.lru_cache(maxsize=4096)
def _items(text: str) -> tuple[str, ...]:
    """A stored list (most rows share their tags: split once)."""
    return tuple(text.split(_ITEM_SEPARATOR)) if text else ()


class _StoredRows(Mapping[str, RowInfo]):
    """A build's row facts, decoded only when a report meets one of its rows for the first time (from the build's
    files again should the stored text not decode)."""

    def __init__(self, text: str | Callable[[], str], build_dir: Path) -> None:
        self._text = text
        self._build_dir = build_dir
        self._rows: Mapping[str, RowInfo] | None = None

    def _decoded(self) -> Mapping[str, RowInfo]:
        if self._rows is None:
            try:
                self._rows = decode_rows(self._text if isinstance(self._text, str) else self._text())
            except UNDECODABLE:
                self._rows = parse_build(self._build_dir).rows
        return self._rows

    def __getitem__(self, key: str) -> RowInfo:
        return self._decoded()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())


def dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# A stored JSON list or object as read: (how many items it holds, its text). A long history's stored state grows by
# a build's items at a time: what it held is written again as the text it was, not encoded anew.
StoredText = tuple[int, str]


def stored_text(items: Sized, text: str) -> StoredText | None:
    """The text `items` were read from, kept to write them again (None when it is not a JSON list or object)."""
    return (len(items), text) if text[:1] + text[-1:] in ("[]", "{}") else None


def stored_count(stored: StoredText | None) -> int:
    """How many items a stored text holds (0: none stored)."""
    return stored[0] if stored is not None else 0


def appended(stored: StoredText | None, new: list[object] | dict[str, object]) -> str:
    """The JSON list (or object) of the items `stored` holds, then the `new` ones."""
    if stored is None or stored[0] == 0:
        return dumps(new)
    return f"{stored[1][:-1]},{dumps(new)[1:]}" if new else stored[1]


def prepended(stored: StoredText | None, new: list[object]) -> str:
    """The JSON list of the `new` items, then those `stored` holds."""
    if stored is None or stored[0] == 0:
        return dumps(new)
    return f"{dumps(new)[:-1]},{stored[1][1:]}" if new else stored[1]
