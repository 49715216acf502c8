"""Where each row ran in each build (the `ran-on` property) as the grid page embeds it: per build, the few node sets
its rows ran on and one code per row, kept in the report's cache and extended by new builds (reports.derived).

A CI job that makes a cluster per run names new nodes in every build, so where a row ran changes from cell to cell:
as part of the cells it would cut every row into one run per build. Per build, a thousand rows ran on a handful of
node sets: a code of one character (of CODE_ALPHABET) per row says which, rows found by an id that never changes
(given in the order rows first appear, oldest build first).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from winsuite_reports.build_codec import StoredText
from winsuite_reports.build_codec import appended
from winsuite_reports.build_codec import prepended
from winsuite_reports.build_codec import stored_count
from winsuite_reports.build_codec import stored_text
from winsuite_reports.prow import ParsedBuild

# Characters that JSON and HTML carry as they are (no quote, backslash, <, > or &); a space is "ran on no node".
CODE_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!#$%()*+,-./:;=?@[]^_{|}~"
NONE = " "


@dataclass(frozen=True, slots=True)
class Column:
    """One build: its node sets, and per row id a code of `width` characters (spaces: no node set)."""

    node_sets: tuple[str, ...] = ()
    codes: str = ""
    width: int = 1


@dataclass
class Placement:
    ids: dict[str, int] = field(default_factory=dict)  # row -> its id
    columns: list[Column] = field(default_factory=list)  # newest build first
    # the ids and columns as the report's cache holds them, when read from it: ids only grow at the end, columns in
    # front
    _stored: tuple[StoredText | None, StoredText | None] = field(default=(None, None), repr=False, compare=False)

    def add_builds(self, builds: Sequence[Mapping[str, str]]) -> list[Column]:
        """The columns of `builds` (each a row -> node set mapping; newest first), new rows given ids oldest first."""
        for ran_on in reversed(builds):
            for row in sorted(ran_on.keys() - self.ids.keys()):
                self.ids[row] = len(self.ids)
        return [self._column(ran_on) for ran_on in builds]

    def _column(self, ran_on: Mapping[str, str]) -> Column:
        if not ran_on:
            return Column()
        node_sets = tuple(sorted(set(ran_on.values())))
        width = 1
        while len(CODE_ALPHABET) ** width < len(node_sets):
            width += 1
        code_of = {nodes: _code(i, width) for i, nodes in enumerate(node_sets)}
        codes = [NONE * width] * (max(self.ids[row] for row in ran_on) + 1)
        for row, nodes in ran_on.items():
            codes[self.ids[row]] = code_of[nodes]
        return Column(node_sets, "".join(codes), width)


def _code(index: int, width: int) -> str:
    digits = []
    for _ in range(width):
        index, digit = divmod(index, len(CODE_ALPHABET))
        digits.append(CODE_ALPHABET[digit])
    return "".join(reversed(digits))


class RowPlacement:
    """The Derivation of a job's Placement (reports.derived)."""

    kind = "ran-on"

    def made(self, builds: Sequence[ParsedBuild]) -> Placement:
        placement = Placement()
        placement.columns = placement.add_builds([build.evidence.ran_on for build in builds])
        return placement

    def extended(self, state: Placement, width: int, new: Sequence[ParsedBuild], keep: int) -> Placement | None:
        if keep < width:  # the oldest builds are gone: rows only they had would keep ids a fresh read does not give
            return None
        state.columns = state.add_builds([build.evidence.ran_on for build in new]) + state.columns
        return state

    def dumps(self, state: Placement) -> str:
        """Two lines of JSON: the rows' ids, the columns (each as it was read, with what is new beside it)."""
        stored_ids, stored_columns = state._stored
        new_ids: dict[str, object] = dict(itertools.islice(state.ids.items(), stored_count(stored_ids), None))
        new_columns: list[object] = [[list(column.node_sets), column.codes, column.width]
                       for column in state.columns[: len(state.columns) - stored_count(stored_columns)]]
        return f"{appended(stored_ids, new_ids)}\n{prepended(stored_columns, new_columns)}"

    def loads(self, text: str) -> Placement:
        ids_text, columns_text = text.split("\n")  # JSON escapes every newline in it
        ids = {str(row): int(row_id) for row, row_id in json.loads(ids_text).items()}
        columns = [Column(tuple(str(nodes) for nodes in node_sets), str(codes), int(width))
                   for node_sets, codes, width in json.loads(columns_text)]
        if sorted(ids.values()) != list(range(len(ids))) or any(
                len(column.codes) % column.width or len(column.codes) > len(ids) * column.width for column in columns):
            raise ValueError("stored placement does not fit its rows")
        return Placement(ids, columns, (stored_text(ids, ids_text), stored_text(columns, columns_text)))
