"""One build directory of the prow layout (started.json, finished.json, JUnit files) read as a grid column."""

from __future__ import annotations

import itertools
import json
import operator
import os
import stat
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from winsuite_reports.conventions import ARTIFACTS
from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import METADATA
from winsuite_reports.conventions import STARTED
from winsuite_reports.conventions import RowProperty
from winsuite_reports.conventions import artifacts_dir
from winsuite_reports.conventions import split_list
from winsuite_reports.conventions import tags_in_name
from winsuite_reports.conventions import tags_in_names
from winsuite_reports.evidence import BuildEvidence
from winsuite_reports.evidence import failure_of
from winsuite_reports.evidence import is_infra_failure
from winsuite_reports.junit import Attempt
from winsuite_reports.junit import MalformedJunit
from winsuite_reports.junit import Testcases
from winsuite_reports.junit import is_junit
from winsuite_reports.junit import merge
from winsuite_reports.junit import read_testcases
from winsuite_reports.model import PASS
from winsuite_reports.model import Build
from winsuite_reports.model import Cell
from winsuite_reports.model import Lazy
from winsuite_reports.model import LazyCells
from winsuite_reports.model import RowInfo
from winsuite_reports.model import Status
from winsuite_reports.model import status_counts

MALFORMED = "Malformed artifacts: "  # TestGrid's message on the Overall cell of such a build
RAN_ON_ATTEMPTS = "; "  # between the nodes of a row's attempts, when a retry ran elsewhere
# TestGrid fails a build that has no finished.json this long after it started.
DEADLINE_SECONDS = 24 * 3600


@dataclass(frozen=True, slots=True)
class ParsedBuild:
    """What a build's files say, independent of when they are read: the report's cache keeps exactly this.

    A cached build decodes its cells and its rows' facts only when a report asks for them: a report over a long
    history needs the cells of a few builds and the facts of new rows only, which is also why `rows` is a Mapping
    and not a dict."""

    id: str
    started: int
    finished: int | None
    outcome: Outcome | None  # None while finished.json is missing or unreadable
    malformed: tuple[str, ...]
    metadata: Mapping[str, object]
    counts: Mapping[Status, int]  # how many cells have each status: what a report asks of every build
    excluded: dict[str, str]
    rows: Mapping[str, RowInfo]
    cell_source: LazyCells
    evidence_source: Lazy[BuildEvidence]  # decoded when a report needs it (a new build, a job's failures remade)
    # How many of `rows`, from the first, are plain: the facts of their names alone (see build_codec.encode_rows).
    plain_rows: int = 0

    @property
    def cells(self) -> dict[str, Cell]:
        return self.cell_source.get()

    @property
    def evidence(self) -> BuildEvidence:
        return self.evidence_source.get()


@dataclass(frozen=True, slots=True)
class Outcome:
    """finished.json's verdict fields, as TestGrid reads them."""

    passed: bool | None
    result: str


def read_build(build_dir: Path, *, now: float) -> Build:
    """Read one build as a grid column at time `now`."""
    return column(parse_build(build_dir), now=now)


def parse_build(build_dir: Path) -> ParsedBuild:
    """Read one build directory's started.json, finished.json, metadata.json and JUnit files."""
    malformed: list[str] = []
    started = _read_object(build_dir / STARTED, malformed, required=True)
    finished = _read_object(build_dir / FINISHED, malformed, required=False)
    # started.json's metadata is deprecated, artifacts/metadata.json is what finished.json will carry.
    metadata = _nested_metadata(started)
    metadata.update(_read_object(artifacts_dir(build_dir) / METADATA, malformed, required=False) or {})
    metadata.update(_nested_metadata(finished))
    start = _timestamp(started, STARTED, malformed) or 0
    end = _timestamp(finished, FINISHED, malformed)

    files: list[Testcases] = []
    for path in junit_files(build_dir):
        try:
            files.append(read_testcases(path))
        except (MalformedJunit, OSError) as err:
            malformed.append(str(err))
    facts = _Facts()
    cells = _cells(files, facts)
    excluded, rows, texts, ran_on = facts.excluded, facts.rows, facts.texts, facts.ran_on
    evidence = _evidence(cells, texts, ran_on)
    outcome = None
    if finished is not None:
        passed = finished.get("passed")
        result = finished.get("result")
        outcome = Outcome(passed if isinstance(passed, bool) else None, str(result) if result else "")
    return ParsedBuild(build_dir.name, start, end, outcome, tuple(malformed), metadata, status_counts(cells.values()),
                       excluded, rows, LazyCells(cells), Lazy(evidence), facts.plain)


def _cells(files: list[Testcases], facts: _Facts) -> dict[str, Cell]:
    """Each row's cell, its attempts merged; `facts` takes what the attempts say beside."""
    keys = list(itertools.chain.from_iterable(found.keys for found in files))
    if len(set(keys)) == len(keys):  # every row one testcase (most builds): the plain passes taken whole
        cells = dict.fromkeys(itertools.chain.from_iterable(found.plain for found in files), PASS)
        facts.rows.update(zip(cells, plain_row_infos(list(cells)), strict=True))
        facts.plain = len(facts.rows)
        for attempt in itertools.chain.from_iterable(found.attempts for found in files):
            if attempt is not None:
                cells[attempt.key] = attempt.cell
                facts.add(attempt)
        return cells
    attempts: dict[str, list[Cell]] = {}
    for attempt in itertools.chain.from_iterable(found.in_order() for found in files):
        found_cells = attempts.get(attempt.key)
        if found_cells is None:
            attempts[attempt.key] = [attempt.cell]
        else:
            found_cells.append(attempt.cell)
        facts.add(attempt)
    # Most rows are one attempt: merging one cell is the cell.
    return {key: cell_list[0] if len(cell_list) == 1 else merge(cell_list) for key, cell_list in attempts.items()}


class _Facts:
    """What a build's attempts say beside their cells, each row's from its first attempt on."""

    def __init__(self) -> None:
        self.excluded: dict[str, str] = {}
        self.rows: dict[str, RowInfo] = {}
        self.texts: dict[str, str] = {}  # a failed row's first failed attempt's whole text
        self.ran_on: dict[str, list[str]] = {}
        self.plain = 0  # how many of `rows`, from the first, are plain passes' (the facts of their names alone)

    def add(self, attempt: Attempt) -> None:
        key, properties = attempt.key, attempt.properties
        if key not in self.rows:
            self.rows[key] = row_info(key, properties)
        if attempt.text and key not in self.texts:
            self.texts[key] = attempt.text
        if not properties:  # most testcases of upstream runs
            return
        if _EXCLUDED in properties:
            self.excluded[key] = properties[_EXCLUDED]
        nodes = properties.get(_RAN_ON)
        if nodes and nodes not in self.ran_on.setdefault(key, []):
            self.ran_on[key].append(nodes)


def _evidence(cells: dict[str, Cell], texts: dict[str, str], ran_on: dict[str, list[str]]) -> BuildEvidence:
    """The build's failures (one per failed or flaky row) and where each row ran (every attempt's nodes)."""
    failing = sorted(key for key, cell in cells.items() if cell is not PASS and cell.status.failing)
    failures = tuple(failure_of(key, cells[key], texts.get(key, cells[key].message),
                                infra=is_infra_failure(cells[key])) for key in failing)
    return BuildEvidence(failures, {key: RAN_ON_ATTEMPTS.join(nodes) for key, nodes in ran_on.items() if nodes})


def column(parsed: ParsedBuild, *, now: float) -> Build:
    """A parsed build as a grid column at time `now`."""
    overall = _overall(parsed.outcome, parsed.started, parsed.finished, parsed.malformed, now)
    if overall.status is Status.FAIL and not overall.message:
        failing = parsed.counts.get(Status.FAIL, 0) + parsed.counts.get(Status.FLAKY, 0) > 0
        overall = _explain_failure(overall, parsed.metadata, failing)
    return Build(parsed.id, parsed.started, parsed.finished, overall, parsed.metadata, parsed.counts,
                 parsed.excluded, parsed.cell_source)


def row_info(key: str, properties: dict[str, str]) -> RowInfo:
    """Row facts from winsuite's testcase properties; upstream rows only have the `[Tag]`s in their name.

    A long history has the same row with the same facts in every build: made once per process."""
    if not properties:
        return plain_row_info(key)
    values = tuple(map(properties.get, _ROW_PROPERTIES))
    memo_key = (key, values)
    info = _ROW_INFO.get(memo_key)
    if info is None:
        if len(_ROW_INFO) >= _ROW_INFO_LIMIT:
            _ROW_INFO.clear()
        info = _ROW_INFO[memo_key] = _row_info(key, *values)
    return info


def plain_row_info(key: str) -> RowInfo:
    """The facts of a row without properties (most rows of upstream runs): the `[Tag]`s in its name."""
    _remember_made()
    info = _PLAIN_ROW_INFO.get(key)
    if info is None:
        if len(_PLAIN_ROW_INFO) >= _ROW_INFO_LIMIT:
            _PLAIN_ROW_INFO.clear()
        info = _PLAIN_ROW_INFO[key] = RowInfo(key, tags_in_name(key))
    return info


def plain_row_infos(keys: list[str]) -> list[RowInfo]:
    """plain_row_info of each of `keys` (distinct, not changed after), the facts new to the process made by C-level
    maps. They are remembered when facts are next asked for: a big run's one build would otherwise pay a hundred
    thousand inserts that no other build reads."""
    _remember_made()
    if not _PLAIN_ROW_INFO:
        made = list(map(RowInfo, keys, tags_in_names(keys)))
        _MADE.append((keys, made))
        return made
    found = list(map(_PLAIN_ROW_INFO.get, keys))
    missing = list(itertools.compress(keys, map(operator.not_, found)))
    if not missing:
        return found  # type: ignore[return-value]  # none is None
    made = list(map(RowInfo, missing, tags_in_names(missing)))
    _MADE.append((missing, made))
    if len(made) == len(keys):
        return made
    new = iter(made)
    return [info if info is not None else next(new) for info in found]


def _remember_made() -> None:
    """The facts plain_row_infos made last, remembered."""
    for keys, made in _MADE:
        if len(_PLAIN_ROW_INFO) + len(made) > _ROW_INFO_LIMIT:
            _PLAIN_ROW_INFO.clear()
        _PLAIN_ROW_INFO.update(zip(keys, made, strict=True))
    _MADE.clear()


# The properties as plain strings: a StrEnum member hashes in Python, and every testcase looks up several.
_ROW_PROPERTIES = tuple(str(name) for name in (
    RowProperty.TAGS, RowProperty.TIER, RowProperty.CATEGORY, RowProperty.PLAN_ITEMS, RowProperty.EXCLUDED,
    RowProperty.ENGINE, RowProperty.OPS_READINESS_CASE))
_EXCLUDED, _RAN_ON = str(RowProperty.EXCLUDED), str(RowProperty.RAN_ON)
_ROW_INFO: dict[tuple[str, tuple[str | None, ...]], RowInfo] = {}
_PLAIN_ROW_INFO: dict[str, RowInfo] = {}
_MADE: list[tuple[list[str], list[RowInfo]]] = []  # made, not yet remembered
_ROW_INFO_LIMIT = 100_000


def _row_info(key: str, tags: str | None, tier: str | None, category: str | None, plan_items: str | None,
              excluded: str | None, engine: str | None, case: str | None) -> RowInfo:
    """The facts of the row's properties (None: not given), as RowProperties.from_junit reads them."""
    return RowInfo(key, tags_in_name(key) if tags is None else split_list(tags), tier or "", category or "",
                   split_list(plan_items) if plan_items else (), excluded or "", engine or "", case or "")


MAX_JSON_BYTES = 16 << 20  # started/finished/metadata.json are a few KiB
LATEST_TIMESTAMP = 1 << 37  # seconds: year 6325; a larger "timestamp" is not a time


class MalformedJson(ValueError):
    """A JSON file of a build that is not a sane JSON object; the text says which and why."""


def read_json_object(path: Path) -> dict[str, object]:
    """A build's JSON object file; MalformedJson for anything else (NaN/Infinity, nesting, size, not an object)."""
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):  # a FIFO would block the reader forever
        raise MalformedJson(f"{path.name}: not a regular file")
    if info.st_size > MAX_JSON_BYTES:
        raise MalformedJson(f"{path.name}: larger than {MAX_JSON_BYTES >> 20} MiB")
    try:
        data = json.loads(path.read_bytes(), parse_constant=_refuse_constant)
    except RecursionError:
        raise MalformedJson(f"{path.name}: nested too deeply") from None
    except ValueError as err:  # JSONDecodeError, UnicodeDecodeError, and the refused constants
        raise MalformedJson(f"{path.name}: {str(err)[:200]}") from None
    if not isinstance(data, dict):
        raise MalformedJson(f"{path.name}: not a JSON object")
    return data


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _read_object(path: Path, malformed: list[str], *, required: bool) -> dict[str, object] | None:
    try:
        return read_json_object(path)
    except FileNotFoundError:
        if required:
            malformed.append(f"{path.name}: missing")
        return None
    except OSError as err:
        malformed.append(f"{path.name}: {err.strerror}")
        return None
    except MalformedJson as err:
        malformed.append(str(err))
        return None


def _nested_metadata(document: dict[str, object] | None) -> dict[str, object]:
    nested = document.get("metadata") if document is not None else None
    return dict(nested) if isinstance(nested, dict) else {}


def _timestamp(document: dict[str, object] | None, name: str, malformed: list[str]) -> int | None:
    if document is None or document.get("timestamp") is None:
        return None
    value = document["timestamp"]
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < LATEST_TIMESTAMP:
        malformed.append(f"{name}: timestamp is not a time in seconds")
        return None
    return int(value)


def junit_files(build_dir: Path) -> Iterator[Path]:
    """Every JUnit file anywhere under the build, as TestGrid lists the whole build prefix."""
    return (Path(entry.path) for _, entry in result_files(str(build_dir)) if is_junit(entry.name))


def result_files(directory: str, relative: str = "") -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Every file parse_build reads under a build, with its path relative to the build: the JSON files at their
    places and every JUnit file, in os.walk's order (a directory's files by name, then its subdirectories by name;
    links to directories not followed). One scan per directory: a report fingerprints every build of its root."""
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=_NAME)
    except OSError:
        return
    subdirs = []
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        name = relative + entry.name
        if is_dir:
            if not entry.is_symlink():
                subdirs.append(entry)
        elif name in _JSON_FILES or is_junit(entry.name):
            yield name, entry
    for entry in subdirs:
        yield from result_files(entry.path, f"{relative}{entry.name}/")


_NAME = operator.attrgetter("name")
_JSON_FILES = frozenset((STARTED, FINISHED, f"{ARTIFACTS}/{METADATA}"))


def _overall(outcome: Outcome | None, start: int, end: int | None, malformed: Sequence[str], now: float) -> Cell:
    """TestGrid's overallCell: malformed, completed, timed out or still running."""
    if malformed:
        return Cell(Status.FAIL, MALFORMED + ", ".join(malformed), "E")
    if outcome is not None and end:
        if outcome.passed is not None:
            return Cell(Status.PASS if outcome.passed else Status.FAIL)
        if not outcome.result:
            return Cell(Status.FAIL)
        passed = outcome.result == "SUCCESS"
        message = f'finished.json missing "passed": {str(passed).lower()}'
        return Cell(Status.PASS if passed else Status.FAIL, message, "E")
    if now > start + DEADLINE_SECONDS:
        return Cell(Status.FAIL, "Build did not complete within 24 hours", "T")
    return Cell(Status.RUNNING, "Build still running...", "R")


def _explain_failure(overall: Cell, metadata: Mapping[str, object], has_failing_cell: bool) -> Cell:
    """A failed build says why: its interrupt reason, or TestGrid's "failed outside of test results"."""
    reason = metadata.get("interrupted")
    if isinstance(reason, str) and reason:
        return Cell(Status.FAIL, f"interrupted: {reason}", "F")
    if has_failing_cell:
        return overall
    return Cell(Status.FAIL, "Build failed outside of test results", "F")
