"""A job's grid as runs of equal cells, the form the report's cache keeps it in between reports.

A long history changes by a build or two between reports: the new grid is the new builds' cells put in front of
the stored runs (the oldest cut off when builds went away), which costs a few operations per row where reading
every build's cells again costs one per cell. Runs index a table of distinct cells; each row is a flat list of
(table index, length) pairs, newest build first.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass

from winsuite_reports.model import NO_RESULT
from winsuite_reports.model import Build
from winsuite_reports.model import Cell


@dataclass
class RunGrid:
    """`runs[key]`: the row's cells as [index into `cells`, length, …], newest build first; `width` builds."""

    cells: list[Cell]
    runs: dict[str, list[int]]
    width: int

    def pairs(self) -> dict[str, list[tuple[Cell, int]]]:
        """Every row as its runs of (cell, length) (what Job.row_runs returns)."""
        cell_of = self.cells.__getitem__
        return {key: list(zip(map(cell_of, runs[::2]), runs[1::2], strict=True)) for key, runs in self.runs.items()}


class _Table:
    """Distinct cells by value, each object looked up by identity first (most are one shared PASS)."""

    def __init__(self, cells: Sequence[Cell] = ()) -> None:
        self.cells = list(cells)
        self._by_value = {cell: i for i, cell in enumerate(self.cells)}
        self._by_id: dict[int, int] = {}

    def index(self, cell: Cell) -> int:
        found = self._by_id.get(id(cell))
        if found is None:
            found = self._by_value.get(cell)
            if found is None:
                found = self._by_value[cell] = len(self.cells)
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
    return RunGrid(table.cells, runs, len(new) + keep)


def row_keys_with_cells(grid: RunGrid) -> set[str]:
    """The rows with at least one cell that is not NO_RESULT."""
    empty = {i for i, cell in enumerate(grid.cells) if cell == NO_RESULT}
    return {key for key, runs in grid.runs.items() if any(runs[i] not in empty for i in range(0, len(runs), 2))}


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


def dumps(grid: RunGrid) -> str:
    cells = [cell.fields() for cell in grid.cells]
    return json.dumps({"cells": cells, "runs": grid.runs, "width": grid.width}, separators=(",", ":"),
                      ensure_ascii=False)


def loads(text: str) -> RunGrid:
    """The stored grid; ValueError, TypeError, KeyError or IndexError when the text is not one (checked whole: a
    grid that decodes is one the report can use)."""
    data = json.loads(text)
    cells = [Cell.of_fields(fields) for fields in data["cells"]]
    width = int(data["width"])
    runs = {str(key): list(map(int, row)) for key, row in data["runs"].items()}
    for row in runs.values():
        indexes = row[::2]
        if len(row) % 2 or sum(row[1::2]) != width or (indexes and not 0 <= min(indexes) <= max(indexes) < len(cells)):
            raise ValueError("a row of the stored grid does not fit its width or its cells")
    return RunGrid(cells, runs, width)
