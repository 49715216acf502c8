"""The results as data: cells, builds, jobs, and the plan items the readiness page groups tests by."""

from __future__ import annotations

import enum
import operator
from collections import Counter
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic
from typing import TypeVar

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
    interrupted: bool = False  # cut off by an interrupt (without a class: infrastructure, not the test's own flakiness)
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


def by_key(mapping: Mapping[str, T]) -> dict[str, T]:
    """`mapping` sorted by key: keys alone sort in half the time of (key, value) pairs, which compare as tuples."""
    return {key: mapping[key] for key in sorted(mapping)}


@dataclass(frozen=True, slots=True)
class PlanItem:
    """A KEP plan item as the caller hands it over: which tests cover it."""

    id: str
    tier: str
    title: str
    tests: Sequence[str] = ()
