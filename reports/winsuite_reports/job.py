"""A job directory as a dashboard tab: its builds, its rows' cells (made on first use), its failures clustered and
where its rows ran; and every job under a results root."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from winsuite_reports.failures import Clustering
from winsuite_reports.model import NO_RESULT
from winsuite_reports.model import Build
from winsuite_reports.model import Cell
from winsuite_reports.model import RowInfo
from winsuite_reports.placement import Placement


@dataclass(slots=True)
class Job:
    """One job directory: a dashboard tab."""

    name: str  # the directory name under the results root
    path: Path  # the job directory, which build links point into
    dashboard: str
    tab: str
    release_blocking: bool
    builds: list[Build]  # newest first
    rows: dict[str, RowInfo]  # row key -> info, sorted by key
    # row key -> its cells, newest build first: made on first use, of the builds' columns, or row by row of the runs
    grid: dict[str, tuple[Cell, ...]] | None = field(default=None, repr=False, compare=False)
    # row key -> its cells as runs of one cell, (cell, length), newest first: given when the report's cache holds the
    # job's grid, else made of the cells
    runs: dict[str, list[tuple[Cell, int]]] | None = field(default=None, repr=False, compare=False)
    url: str = ""  # the job directory's web address (a remote root's); "" links the local path
    # its failures clustered (reports.failures) and where its rows ran (reports.placement), when read with them
    failures: Clustering | None = field(default=None, repr=False, compare=False)
    placement: Placement | None = field(default=None, repr=False, compare=False)

    def cells(self, key: str) -> tuple[Cell, ...]:
        """The row's cells, newest build first; NO_RESULT where the build has none."""
        grid = self._grid()
        found = grid.get(key)
        if found is None and self.runs is not None and key in self.runs:
            found = grid[key] = tuple(cells_of(self.runs[key]))
        return found or tuple(NO_RESULT for _ in self.builds)

    def _grid(self) -> dict[str, tuple[Cell, ...]]:
        """The rows' cells made so far: given runs, each row's are its runs expanded when first asked for (most pages
        read a few rows cell by cell); else every row's, of the builds' columns transposed at once."""
        if self.grid is None:
            self.grid = {} if self.runs is not None else transposed(self.builds, list(self.rows))
        return self.grid

    def row_runs(self, key: str) -> list[tuple[Cell, int]]:
        """The row's cells as runs, (cell, length), newest build first: a long history's row is a few runs, so
        what goes over runs costs a few steps a row where going over cells costs hundreds."""
        runs = self.every_row_runs()
        found = runs.get(key)
        if found is None:  # not a row of the tab
            found = runs[key] = _runs(self.cells(key))
        return found

    def every_row_cells(self) -> dict[str, tuple[Cell, ...]]:
        """Every row's cells (as `cells` gives them), for an analysis that goes over every row: a big tab's hundred
        thousand rows are as many method calls otherwise."""
        grid = self._grid()
        if len(grid) < len(self.rows):
            grid.update((key, self.cells(key)) for key in self.rows.keys() - grid.keys())
        return grid

    def every_row_runs(self) -> dict[str, list[tuple[Cell, int]]]:
        """Every row's runs (as `row_runs` gives them), made for every row at once."""
        if self.runs is None:
            if len(self.builds) == 1 and self.grid is None:  # a one-build tab: each row is one run of its cell
                self.runs = _one_run_each(self.builds[0].cells, list(self.rows))
            else:
                self.runs = {key: _runs(cells) for key, cells in self.every_row_cells().items()}
        elif len(self.runs) < len(self.rows):
            self.runs.update((key, _runs(self.cells(key))) for key in self.rows.keys() - self.runs.keys())
        return self.runs


def cells_of(runs: Iterable[tuple[Cell, int]]) -> Iterator[Cell]:
    """A row's cells of its runs, newest first, made as they are read (most readers stop at the newest few)."""
    return itertools.chain.from_iterable(itertools.starmap(itertools.repeat, runs))


def _one_run_each(cells: dict[str, Cell], keys: list[str]) -> dict[str, list[tuple[Cell, int]]]:
    """The runs of the rows `keys` over one build's `cells`: each row one run of its cell (NO_RESULT where the build
    has none), the same list for the rows of the same cell (a big run's hundred thousand plain passes share one).
    Made by C-level maps but for one step per distinct cell: no row's cells are made."""
    column = list(_column(cells, keys, operator.itemgetter(*keys) if len(keys) > 1 else None))
    distinct = dict(zip(map(id, column), column, strict=True))
    shared = {number: [(cell, 1)] for number, cell in distinct.items()}
    return dict(zip(keys, map(shared.__getitem__, map(id, column)), strict=True))


def _runs(cells: tuple[Cell, ...]) -> list[tuple[Cell, int]]:
    """`cells` as runs of one cell, (cell, length); a row that is one cell throughout is one run without grouping."""
    if len(set(map(id, cells))) == 1:  # a passing row, or a one-build tab: in C
        return [(cells[0], len(cells))]
    return [(run[0], len(run)) for run in (list(group) for _, group in itertools.groupby(cells, key=id))]


def transposed(builds: Sequence[Build], keys: list[str]) -> dict[str, tuple[Cell, ...]]:
    """Each row's cells over `builds`, NO_RESULT where a build has none. The builds hold columns and every page
    reads rows: transposed once, by C-level map and zip (a row-by-row lookup is a million dict calls on a long
    history)."""
    every = operator.itemgetter(*keys) if len(keys) > 1 else None
    columns = [_column(build.cells, keys, every) for build in builds]
    rows = zip(*columns, strict=True) if columns else itertools.repeat(())
    return dict(zip(keys, rows, strict=False))  # repeat(()) is endless


def _column(cells: dict[str, Cell], keys: list[str], every: Callable[[dict[str, Cell]], tuple[Cell, ...]] | None
            ) -> Iterable[Cell]:
    """One build's cells in the order of `keys`: in one C call when the build has every row (most builds do)."""
    if every is not None:
        try:
            return every(cells)
        except KeyError:
            pass
    return map(cells.get, keys, itertools.repeat(NO_RESULT))


@dataclass(slots=True)
class History:
    """Everything under one results root."""

    root: Path
    jobs: list[Job]

    def job(self, name: str) -> Job | None:
        return next((job for job in self.jobs if job.name == name), None)
