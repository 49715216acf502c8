"""A job's grid as runs of equal cells, the form the report's cache keeps it in between reports.

A long history changes by a build or two between reports: the new grid is the new builds' cells put in front of
the stored runs (the oldest cut off when builds went away), which costs a few operations per row where reading
every build's cells again costs one per cell. Runs index a table of distinct cells; each row is a flat list of
(table index, length) pairs, newest build first.

Stored, the table is JSON that only grows (a new build's cells are appended to the stored text, not the whole table
written again) and the runs are one array of integers in the rows' order (a long history's grid is tens of thousands
of them: read and written in one C call each).
"""

from __future__ import annotations

import itertools
import json
import sys
from array import array
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass

from winsuite_reports.build_codec import StoredText
from winsuite_reports.build_codec import appended
from winsuite_reports.build_codec import stored_count
from winsuite_reports.build_codec import stored_text
from winsuite_reports.model import NO_RESULT
from winsuite_reports.model import Build
from winsuite_reports.model import Cell
from winsuite_reports.model import cell_value


@dataclass
class RunGrid:
    """`runs[key]`: the row's cells as [index into `cells`, length, …], newest build first; `width` builds."""

    cells: list[Cell]
    runs: dict[str, list[int]]
    width: int
    # the first cells as the cache holds them, when read from it: written again as they are
    stored: StoredText | None = None

    def pairs(self) -> dict[str, list[tuple[Cell, int]]]:
        """Every row as its runs of (cell, length) (what Job.row_runs returns)."""
        cell_of = self.cells.__getitem__
        return {key: list(zip(map(cell_of, runs[::2]), runs[1::2], strict=True)) for key, runs in self.runs.items()}


class _Table:
    """Distinct cells by value, each object looked up by identity first (most are one shared PASS)."""

    def __init__(self, cells: Sequence[Cell] = ()) -> None:
        self.cells = list(cells)
        self._by_value = dict(zip(map(cell_value, self.cells), range(len(self.cells)), strict=True))
        self._by_id: dict[int, int] = {}

    def index(self, cell: Cell) -> int:
        found = self._by_id.get(id(cell))
        if found is None:
            value = cell_value(cell)
            found = self._by_value.get(value)
            if found is None:
                found = self._by_value[value] = len(self.cells)
                self.cells.append(cell)
            self._by_id[id(cell)] = found
        return found


def of_rows(rows: Mapping[str, tuple[Cell, ...]], width: int) -> RunGrid:
    """The runs of a grid given as rows of cells (each `width` long)."""
    table = _Table([NO_RESULT])
    runs = {}
    for key, cells in rows.items():
        row: list[int] = []
        for _, group in itertools.groupby(cells, key=id):  # by identity: equal cells apart only cost a run
            members = list(group)
            row += [table.index(members[0]), len(members)]
        runs[key] = row
    return RunGrid(table.cells, runs, width)


def extended(stored: RunGrid, new: Sequence[Build], keep: int, keys: Iterable[str]) -> RunGrid:
    """The grid of `new` builds (newest first) followed by the newest `keep` builds of `stored`, for `keys` (every
    row that has a cell in one of them)."""
    table = _Table(stored.cells)
    columns = [build.cells for build in new]
    whole = keep >= stored.width  # no stored build went away: each stored row is kept as it is
    runs = {}
    for key in keys:
        head = _encode([table.index(cells.get(key, NO_RESULT)) for cells in columns]) if columns else []
        tail = stored.runs.get(key) or [table.index(NO_RESULT), stored.width]
        if not whole:
            tail = _cut(tail, keep)
        if head and tail and head[-2] == tail[0]:  # the new cells continue the newest stored run
            head[-1] += tail[1]
            tail = tail[2:]
        runs[key] = head + tail
    grid = RunGrid(table.cells, runs, len(new) + keep, stored.stored)  # the table only grew
    return grid if whole else _compacted(grid)


def _compacted(grid: RunGrid) -> RunGrid:
    """The grid without the cells no row uses any more, once they are most of its table (builds that went away
    leave theirs behind)."""
    used = sorted({index for row in grid.runs.values() for index in row[::2]})
    if len(used) * 2 > len(grid.cells):
        return grid
    new_index = {old: new for new, old in enumerate(used)}
    runs = {key: [new_index[value] if i % 2 == 0 else value for i, value in enumerate(row)]
            for key, row in grid.runs.items()}
    return RunGrid([grid.cells[index] for index in used], runs, grid.width)


def row_keys_with_cells(grid: RunGrid) -> set[str]:
    """The rows with at least one cell that is not NO_RESULT."""
    empty = {i for i, value in enumerate(map(cell_value, grid.cells)) if value == _NO_RESULT_VALUE}
    return {key for key, runs in grid.runs.items() if any(runs[i] not in empty for i in range(0, len(runs), 2))}


_NO_RESULT_VALUE = cell_value(NO_RESULT)


def _encode(indexes: list[int]) -> list[int]:
    runs: list[int] = []
    for index, group in itertools.groupby(indexes):
        runs += [index, sum(1 for _ in group)]
    return runs


def _cut(runs: list[int], keep: int) -> list[int]:
    """The first `keep` cells of a row's runs."""
    kept: list[int] = []
    left = keep
    for i in range(0, len(runs), 2):
        if left <= 0:
            break
        length = min(runs[i + 1], left)
        kept += [runs[i], length]
        left -= length
    return kept


def dumps(grid: RunGrid, keys: Sequence[str]) -> tuple[str, bytes]:
    """The grid as the cache stores it: its cells' JSON, and its runs (width, each row's size, then every row's runs,
    rows in the order of `keys`) as little-endian 32-bit integers."""
    text = appended(grid.stored, [cell.fields() for cell in grid.cells[stored_count(grid.stored):]])
    rows = [grid.runs[key] for key in keys]
    numbers = array("i", [grid.width, *map(len, rows)])
    numbers.extend(itertools.chain.from_iterable(rows))
    if sys.byteorder == "big":
        numbers.byteswap()
    return text, numbers.tobytes()


def loads(cells: str, runs: bytes, keys: Sequence[str]) -> RunGrid:
    """The stored grid of the rows `keys`; ValueError, TypeError, KeyError or IndexError when what is stored is not
    one (checked whole: a grid that decodes is one the report can use)."""
    table = [Cell.of_fields(fields) for fields in json.loads(cells)]
    numbers = array("i")
    numbers.frombytes(runs)  # ValueError: not a whole number of integers
    if sys.byteorder == "big":
        numbers.byteswap()
    values = numbers.tolist()
    width, sizes, body = values[0], values[1 : len(keys) + 1], values[len(keys) + 1 :]
    if len(sizes) != len(keys) or sum(sizes) != len(body) or min(sizes, default=0) < 0:
        raise ValueError("the stored runs do not fit the rows")
    grid: dict[str, list[int]] = {}
    start = 0
    for key, size in zip(keys, sizes, strict=True):
        row = grid[key] = body[start : start + size]
        start += size
        if size % 2 or sum(row[1::2]) != width:
            raise ValueError("a row of the stored grid does not fit its width")
    indexes = body[::2]  # every row is of even size: the even places are indexes into the table
    if indexes and not 0 <= min(indexes) <= max(indexes) < len(table):
        raise ValueError("a row of the stored grid names a cell it does not have")
    return RunGrid(table, grid, width, stored_text(table, cells))
