"""The results as data: cells, builds, jobs, and the plan items the readiness page groups tests by."""

from __future__ import annotations

import enum
import itertools
import operator
from collections import Counter
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Generic
from typing import TypeVar

if TYPE_CHECKING:  # both are made of builds, which this module defines
    from winsuite_reports.failures import Clustering
    from winsuite_reports.placement import Placement

T = TypeVar("T")


class ReportError(ValueError):
    """A request names a job or build that the results do not hold; the message says what they hold."""


class Status(enum.Enum):
    """A cell's result under TestGrid's names; the value is the one-letter code the grid page uses."""

    NO_RESULT = "_"
    PASS = "P"
    SKIP = "S"  # TestGrid's PASS_WITH_SKIPS: counts as passing everywhere but is drawn pale
    RUNNING = "R"
    FAIL = "F"
    FLAKY = "K"

    # Members are singletons compared by identity: hashing them by identity too keeps the hash in C, where Enum's
    # own __hash__ is a Python call (hundreds of thousands of cells are looked up by status in every report).
    __hash__ = object.__hash__

    @property
    def passing(self) -> bool:
        return self in (Status.PASS, Status.SKIP)

    @property
    def failing(self) -> bool:
        return self in (Status.FAIL, Status.FLAKY)


_STATUS = {status.value: status for status in Status}  # a dict lookup: Status(value) is an Enum call
# TestGrid's result.GTE order: when attempts merge without a pass/fail mix, the most severe one wins.
SEVERITY = {status: rank for rank, status in enumerate(Status)}


@dataclass(frozen=True, slots=True)
class Cell:
    """One test in one build (all of its attempts merged), or a build's Overall cell."""

    status: Status
    message: str = ""
    icon: str = ""
    diagnostics: str = ""  # relative to the build directory, e.g. "artifacts/<slug>/"
    interrupted: bool = False  # cut off by an interrupt: not the test's own flakiness
    failure_class: str = ""  # why a failing cell failed (a FailureClass value), "" when its results do not say
    evidence: str = ""  # what was observed that decided the class

    def fields(self) -> list[object]:
        """The cell as a JSON list (how the report's cache stores it)."""
        return [self.status.value, self.message, self.icon, self.diagnostics, self.interrupted, self.failure_class,
                self.evidence]

    @staticmethod
    def of_fields(fields: Sequence[object]) -> Cell:
        """The cell `fields` made; ValueError, TypeError, KeyError or IndexError when it is not one."""
        status, message, icon, diagnostics, interrupted, failure_class, evidence = fields
        if fields == _PASS_FIELDS:
            return PASS  # the shared object: found by identity where cells are looked up
        return Cell(_STATUS[str(status)], str(message), str(icon), str(diagnostics), bool(interrupted),
                    str(failure_class), str(evidence))


NO_RESULT = Cell(Status.NO_RESULT)
# Most cells of a healthy history are plain passes; sharing one object keeps large histories small.
PASS = Cell(Status.PASS)
# A cell's fields as a tuple, made and hashed in C: where many cells are looked up by value (a dataclass's __hash__
# and __eq__ are Python calls).
cell_value = operator.attrgetter("status", "message", "icon", "diagnostics", "interrupted", "failure_class",
                                 "evidence")


_PASS_FIELDS = PASS.fields()


# not frozen: a frozen dataclass's __init__ costs four times as much, and a big tab makes one per row
@dataclass(slots=True)
class RowInfo:
    """What a row is: its full name and the facts winsuite records about it (from its newest result)."""

    name: str
    tags: tuple[str, ...] = ()
    tier: str = ""
    category: str = ""
    plan_items: tuple[str, ...] = ()
    excluded: str = ""  # the exclusion's reason when the test matched one
    engine: str = ""  # native (winsuite's port) or upstream (e2e.test); "" when the results do not say
    case: str = ""  # the windows-operational-readiness test case(s) that selected it, " | "-separated


class Lazy(Generic[T]):
    """A value, or the function that reads it: read at most once, whoever asks (a build's cells: a parse and the grid
    column made of it share one)."""

    __slots__ = ("_read", "_value")

    def __init__(self, value: T | Callable[[], T]) -> None:
        self._value: T | None = None if callable(value) else value
        self._read: Callable[[], T] | None = value if callable(value) else None

    def get(self) -> T:
        if self._value is None:
            assert self._read is not None
            self._value, self._read = self._read(), None
        return self._value


LazyCells = Lazy[dict[str, Cell]]


@dataclass(slots=True, eq=False)
class Build:
    """One run of a job: a column of the grid.

    Its cells are read only when asked for: a report over a long history reads the rows from the job's stored grid
    and each build's counts, and the cells of a few builds."""

    id: str
    started: int  # epoch seconds; 0 when started.json is missing or malformed
    finished: int | None  # None while running (no finished.json)
    overall: Cell
    metadata: Mapping[str, object]
    counts: Mapping[Status, int]  # how many of its cells have each status (the Overall cell apart)
    excluded: dict[str, str]  # row -> exclusion reason, in this build
    cell_source: LazyCells

    @property
    def cells(self) -> dict[str, Cell]:
        return self.cell_source.get()

    @property
    def running(self) -> bool:
        return self.overall.status is Status.RUNNING

    def meta(self, *keys: str) -> str:
        """The first non-empty string value among `keys` of the build's metadata, or ""."""
        for key in keys:
            value = self.metadata.get(key)
            if isinstance(value, str | int | float) and not isinstance(value, bool) and str(value):
                return str(value)
        return ""

    def _facts(self) -> tuple[object, ...]:
        return (self.id, self.started, self.finished, self.overall, dict(self.metadata), dict(self.counts),
                self.excluded, self.cells)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Build) and self._facts() == other._facts()

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


def status_counts(cells: Iterable[Cell]) -> dict[Status, int]:
    """How many cells have each status (only the statuses present)."""
    return dict(Counter(map(_STATUS_OF, cells)))


_STATUS_OF = operator.attrgetter("status")


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


def by_key(mapping: Mapping[str, T]) -> dict[str, T]:
    """`mapping` sorted by key: keys alone sort in half the time of (key, value) pairs, which compare as tuples."""
    return {key: mapping[key] for key in sorted(mapping)}


@dataclass(slots=True)
class History:
    """Everything under one results root."""

    root: Path
    jobs: list[Job]

    def job(self, name: str) -> Job | None:
        return next((job for job in self.jobs if job.name == name), None)


@dataclass(frozen=True, slots=True)
class PlanItem:
    """A KEP plan item as the caller hands it over: which tests cover it."""

    id: str
    tier: str
    title: str
    tests: Sequence[str] = ()
