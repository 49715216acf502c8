"""A tab's grid as compact data for the page's script: run-length encoded rows over a shared string table.

500 builds x 1,000 tests is half a million cells; as HTML that is megabytes, as runs of equal cells
(TestGrid stores its grid the same way) a healthy row is a dozen bytes. Each row is a flat list of runs,
RUN_WIDTH integers each: status code, length, then message, diagnostics path, icon, failure class and evidence
(indexes into `strings`). Where each row ran is per build (reports.placement): its node sets and a code per row.
"""

from __future__ import annotations

import functools
import itertools
import json
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from json.encoder import encode_basestring_ascii as _json_string
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from winsuite_reports import environment
from winsuite_reports.clusters import row_clusters
from winsuite_reports.conventions import FailureClass
from winsuite_reports.environment import recorded_axes
from winsuite_reports.failure_counts import NONE as NO_FAILURES
from winsuite_reports.failure_counts import FailureCounts
from winsuite_reports.failure_counts import per_build
from winsuite_reports.job import Job
from winsuite_reports.model import Build
from winsuite_reports.model import Cell
from winsuite_reports.model import Status
from winsuite_reports.model import cell_value
from winsuite_reports.placement import CODE_ALPHABET
from winsuite_reports.placement import Column

# The script indexes this string with each run's status code.
CODES = "".join(status.value for status in Status)
_CODE = {status: i for i, status in enumerate(Status)}
RUN_WIDTH = 7
# What a failed cell shows for its class (the page's legend says it): a test's own failure keeps TestGrid's F.
CLASS_ICONS: dict[str, str] = {FailureClass.INFRASTRUCTURE: "I", FailureClass.SETUP: "U", FailureClass.TIMEOUT: "T",
               FailureClass.TEST: "F"}
UNCLASSIFIED_ICON = "?"  # in a column's failure counts: failures whose results name no class
Facts = tuple[tuple[str, ...], str, str, str]  # a row's tags, tier, category and engine: what the page filters by


class StringTable:
    """Every message, path and label once; index 0 is the empty string."""

    def __init__(self) -> None:
        self.strings: list[str] = [""]
        self._index: dict[str, int] = {"": 0}

    def __call__(self, text: str) -> int:
        index = self._index.get(text)
        if index is None:
            index = self._index[text] = len(self.strings)
            self.strings.append(text)
        return index


def encode_row(row_runs: Iterable[tuple[Cell, int]], strings: StringTable) -> list[int]:
    """A row given as runs of (cell, length), equal neighbours joined."""
    encoder = RunEncoder(strings)
    return encoder.encoded(encoder.joined(row_runs))


class RunEncoder:
    """Rows' runs encoded over one string table. Each distinct cell is numbered once, by value, and its fields are
    encoded once: a long history's rows repeat a few cells each, and share most of them."""

    def __init__(self, strings: StringTable) -> None:
        self.strings = strings
        self._number_of: dict[int, int] = {}  # id(cell) -> its number
        self._by_value: dict[tuple[object, ...], int] = {}  # by cell_value
        self._held: list[Cell] = []  # every cell numbered: the objects whose ids are keys stay alive
        self._cells: list[Cell] = []  # by number
        self._fields: list[tuple[int, int, int, int, int, int] | None] = []  # by number, once encoded

    def joined(self, row_runs: Iterable[tuple[Cell, int]]) -> list[int]:
        """The row as [cell number, length, …], equal neighbours joined: what the row's encoding is made of."""
        numbered: list[int] = []
        previous = -1
        number_of = self._number_of.get
        for cell, length in row_runs:
            number = number_of(id(cell))
            if number is None:
                number = self._numbered(cell)
            if number == previous:
                numbered[-1] += length
            else:
                numbered += (number, length)
                previous = number
        return numbered

    def encoded(self, numbered: list[int]) -> list[int]:
        """A joined row's runs, RUN_WIDTH integers each; a cell's texts enter the string table when first encoded."""
        runs: list[int] = []
        for i in range(0, len(numbered), 2):
            fields = self._fields[numbered[i]] or self._encoded_cell(numbered[i])
            runs += (fields[0], numbered[i + 1], *fields[1:])
        return runs

    def _numbered(self, cell: Cell) -> int:
        value = cell_value(cell)
        number = self._by_value.get(value)
        if number is None:
            number = self._by_value[value] = len(self._cells)
            self._cells.append(cell)
            self._fields.append(None)
        self._held.append(cell)
        self._number_of[id(cell)] = number
        return number

    def _encoded_cell(self, number: int) -> tuple[int, int, int, int, int, int]:
        cell = self._cells[number]
        if not (cell.message or cell.diagnostics or cell.icon or cell.failure_class or cell.evidence):
            fields = (_CODE[cell.status], 0, 0, 0, 0, 0)  # most runs: plain passes (0 is "")
        else:
            strings = self.strings
            fields = (_CODE[cell.status], strings(cell.message), strings(_href(cell.diagnostics)),
                      strings(_icon(cell)), strings(cell.failure_class), strings(cell.evidence))
        self._fields[number] = fields
        return fields


@functools.lru_cache(maxsize=4096)
def _href(path: str) -> str:
    """A diagnostics path as a link (a row's failures share one path: quoted once)."""
    return quote(path, safe="/") if path else ""


def _icon(cell: Cell) -> str:
    """A failed cell's class letter where TestGrid shows F; other icons (n/N of retried rows, S of skips) stay."""
    if cell.status is Status.FAIL and cell.icon == "F":
        return CLASS_ICONS.get(cell.failure_class, cell.icon)
    return cell.icon


def _short_label(counts: FailureCounts) -> str:
    """A build's failed rows per class as its column header has room for, by their cells' letters: "2I 1F" (its
    tooltip spells them out, flaky rows too)."""
    return " ".join(f"{n}{CLASS_ICONS.get(name, UNCLASSIFIED_ICON)}" for name, n in counts.classes)


def column_time(epoch: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(epoch)) if epoch else "—"


def short_time(epoch: int) -> str:
    """A column's start in a rotated header: month, day and time (the year is in the title)."""
    return time.strftime("%m-%d %H:%M", time.gmtime(epoch)) if epoch else "—"


def grid_data(job: Job, build_href: Callable[[Build], str], columns: int) -> dict[str, object]:
    """The JSON the grid page embeds; `build_href` links a build's directory from the page."""
    strings = StringTable()
    axes = recorded_axes(job.builds)
    failures = per_build(job)
    placement = job.placement.columns if job.placement is not None else []
    if len(placement) != len(job.builds):
        placement = [Column()] * len(job.builds)
    builds = [
        {
            "id": build.id,
            "h": build_href(build),
            "t": column_time(build.started),
            "s": short_time(build.started),
            "e": [environment.value(build, axis) for axis in axes],
            "n": f"{build_href(build)}/{node_logs}" if (node_logs := build.meta("node-logs")) else "",
            "f": strings(_short_label(failures.get(build.id, NO_FAILURES))),
            "ft": strings(failures.get(build.id, NO_FAILURES).label()),
            "o": [strings(nodes) for nodes in column.node_sets],
            "p": column.codes,
            "pw": column.width,
        }
        for build, column in zip(job.builds, placement, strict=True)
    ]
    rows = _rows(job, strings, row_clusters(job), job.placement.ids if job.placement is not None else {})
    return {
        "codes": CODES,
        "runWidth": RUN_WIDTH,
        "placementAlphabet": CODE_ALPHABET,
        "columns": columns,
        "axes": [axis.label for axis in axes],
        "builds": builds,
        "overall": encode_row(((build.overall, 1) for build in job.builds), strings),
        "rows": rows,
        "strings": strings.strings,
    }


class GridRows:
    """A tab's rows as the page's script reads each: [name, tags, tier, category, engine, runs, cluster, id] (string
    indexes but the encoded runs and the id, -1 for none). A big tab's hundred thousand rows mostly share all but their
    name: kept as each row's name and the JSON of the rest (its tail), which rows of the same rest share."""

    __slots__ = ("_fields", "facts", "names", "tails")

    def __init__(self, names: list[str], tails: list[str], fields: dict[str, list[object]], facts: set[Facts]) -> None:
        self.names = names
        self.tails = tails  # per row: ", tags, tier, category, engine, [runs], cluster, id]"
        self._fields = fields  # each tail's fields
        self.facts = facts  # the rows' distinct facts

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, index: int) -> list[Any]:  # a row is a JSON list of mixed fields
        return [self.names[index], *self._fields[self.tails[index]]]

    def __iter__(self) -> Iterator[list[Any]]:
        return map(self.__getitem__, range(len(self.names)))

    def json(self) -> str:
        """The rows as json.dumps writes them: the names encoded and joined to their tails in C, without a step per
        row in Python."""
        if not self.names:
            return "[]"
        pieces = itertools.chain.from_iterable(zip(itertools.repeat(", ["), map(_json_string, self.names), self.tails))
        return "[[" + "".join(itertools.islice(pieces, 1, None)) + "]"  # the first row opens without a comma

    def filters(self) -> list[tuple[str, list[str]]]:
        """What the page's filters offer: each fact's values over the rows, from their few distinct facts."""
        return [
            ("tag", sorted(set(itertools.chain.from_iterable(tags for tags, _, _, _ in self.facts)))),
            ("tier", sorted({tier for _, tier, _, _ in self.facts} - {""})),
            ("category", sorted({category for _, _, category, _ in self.facts} - {""})),
            ("engine", sorted({engine for _, _, _, engine in self.facts} - {""})),
        ]


def _rows(job: Job, strings: StringTable, clusters: dict[str, str], ids: dict[str, int]) -> GridRows:
    """The rows in one pass, each distinct rest (facts, runs, cluster, id) encoded once where rows first use it (the
    string table's order stays that of row by row)."""
    names: list[str] = []
    tails: list[str] = []
    fields: dict[str, list[object]] = {}
    encoder = RunEncoder(strings)
    # Found by the runs list's identity first (rows of one cell share one list), else by its cells' numbers: a big
    # tab's skips and failures are thousands of lists of equal cells.
    by_identity: dict[tuple[object, ...], str] = {}
    by_content: dict[tuple[object, ...], str] = {}
    facts: set[Facts] = set()
    every_runs = job.every_row_runs()
    for key, info in job.rows.items():
        runs = every_runs[key]  # held there throughout: its id is no other list's
        cluster, row_id = clusters.get(key, ""), ids.get(key, -1)
        rest = (info.tags, info.tier, info.category, info.engine, id(runs), cluster, row_id)
        tail = by_identity.get(rest)
        if tail is None:
            numbered = encoder.joined(runs)
            content = (info.tags, info.tier, info.category, info.engine, tuple(numbered), cluster, row_id)
            tail = by_content.get(content)
            if tail is None:
                row_fields = [strings(",".join(info.tags)), strings(info.tier), strings(info.category),
                              strings(info.engine), encoder.encoded(numbered), strings(cluster), row_id]
                tail = by_content[content] = _json_tail(row_fields)
                fields[tail] = row_fields
                facts.add((info.tags, info.tier, info.category, info.engine))
            by_identity[rest] = tail
        names.append(info.name)
        tails.append(tail)
    return GridRows(names, tails, fields, facts)


def _json_tail(row_fields: list[Any]) -> str:
    """A row's fields but its name as json.dumps writes them, without their "[": integers and one list of them."""
    tags, tier, category, engine, runs, cluster, row_id = row_fields
    return f", {tags}, {tier}, {category}, {engine}, [{', '.join(map(str, runs))}], {cluster}, {row_id}]"


def grid_json(data: dict[str, object]) -> Markup:
    """`data` as jinja's tojson writes it into the page (JSON with sorted keys, its <, >, & and ' escaped), the rows
    written by GridRows.json."""
    parts = []
    for key in sorted(data):
        value = data[key]
        text = value.json() if isinstance(value, GridRows) else json.dumps(value, sort_keys=True)
        parts.append(f"{_json_string(key)}: {text}")
    text = "{" + ", ".join(parts) + "}"
    for char, escaped in _HTML_UNSAFE:
        if char in text:  # a search is a memchr; a replace counts character by character, even to find none
            text = text.replace(char, escaped)
    return Markup(text)


_HTML_UNSAFE = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("'", "\\u0027"))
