"""JUnit XML as TestGrid reads it: every testcase is one attempt; same-named attempts merge into one cell."""

from __future__ import annotations

import itertools
import re
import stat
import xml.etree.ElementTree as ET
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from xml.parsers import expat

from winsuite_reports.conventions import IT_PREFIX
from winsuite_reports.conventions import RowProperty
from winsuite_reports.model import PASS
from winsuite_reports.model import SEVERITY
from winsuite_reports.model import Cell
from winsuite_reports.model import Status

# TestGrid's util/gcs/read.go: junit_CONTEXT_TIMESTAMP_THREAD.xml, any other junit*.xml, or test.xml.
JUNIT_FILE = re.compile(r"^(?:junit((_[^_]+)?(_\d+-\d+)?(_\d+)?|.+)?\.xml|test\.xml)$")
MAX_JUNIT_BYTES = 100 * 1024 * 1024  # TestGrid rejects larger files as "too large"
MESSAGE_CHARS = 140  # TestGrid keeps this much of a cell's message
MAX_TEXT_CHARS = 20_000  # a failure's text kept for the Failures page (triage reads at most 10,000 of it)
# The properties read per testcase, as plain strings: a StrEnum member hashes in Python.
_INTERRUPTED, _TIMED_OUT = str(RowProperty.INTERRUPTED), str(RowProperty.TIMED_OUT)
_DIAGNOSTICS = str(RowProperty.DIAGNOSTICS)
_FAILURE_CLASS, _FAILURE_EVIDENCE = str(RowProperty.FAILURE_CLASS), str(RowProperty.FAILURE_EVIDENCE)

_T = TypeVar("_T")


class MalformedJunit(Exception):
    """A JUnit file TestGrid would refuse; shown as "Malformed artifacts" on the build's Overall cell."""


# not frozen: a frozen dataclass's __init__ costs four times as much, and a big tab makes one per row
@dataclass(slots=True)
class Attempt:
    """One testcase element: the row it belongs to, its cell and its testcase-level properties, and, when it
    failed, its whole failure text (the cell keeps TestGrid's 140 characters of it)."""

    key: str
    cell: Cell
    properties: dict[str, str]
    text: str = ""


def is_junit(filename: str) -> bool:
    return JUNIT_FILE.match(filename) is not None


def row_key(testcase_name: str) -> str:
    """The row a testcase lands on: its name without the `[It] ` that e2e.test and winsuite write."""
    return testcase_name.removeprefix(IT_PREFIX)


@dataclass(slots=True)
class Testcases:
    """One JUnit file's testcases, in document order. A testcase without children (no properties, failure or skip)
    is a plain pass, told by its row alone: most testcases of a big run are, and a build whose rows are one testcase
    each takes them in bulk."""

    keys: list[str]  # every testcase's row
    childless: list[bool]  # per testcase: a plain pass
    attempts: list[Attempt | None]  # the testcases with children; None for one TestGrid drops (a bare skip)

    @property
    def plain(self) -> Iterator[str]:
        """The rows of the plain passes."""
        return itertools.compress(self.keys, self.childless)

    def in_order(self) -> Iterator[Attempt]:
        """Every attempt, plain passes included, in document order."""
        others = iter(self.attempts)
        for key, childless in zip(self.keys, self.childless, strict=True):
            attempt = Attempt(key, PASS, {}) if childless else next(others)
            if attempt is not None:
                yield attempt


def read_testcases(path: Path) -> Testcases:
    """One JUnit file's testcases; MalformedJunit for a file TestGrid would refuse (as parse_guarded does)."""
    data = _checked_bytes(path)
    reader = _TestcaseReader()
    _parsed(path, lambda: reader.parse(data))
    if reader.root not in _ROOTS:
        raise MalformedJunit(_not_junit(path, reader.root))
    keys = list(map(str.removeprefix, reader.names, itertools.repeat(IT_PREFIX)))
    return Testcases(keys, reader.childless, reader.attempts)


class _TestcaseReader:
    """A JUnit file's testcases read as expat parses it, with elements built only under the testcases that have
    children: the others are plain passes, told by their name alone. A big run's file holds a hundred thousand
    testcases, most of them plain, and a whole element tree of it takes twice the memory and more time than the
    parse.

    Inside a testcase with children, expat calls ElementTree's TreeBuilder itself (C to C) for every start and text;
    only each end comes back here, to see the testcase close. A testcase inside another (rare) is a testcase of its
    own, as with ElementTree's `iter("testcase")`: found in the outer one's tree once it is built. Elements are named
    as ElementTree names them (expat's namespace separator `}`): a namespaced `testcase` is not one."""

    def __init__(self) -> None:
        self.root = ""  # the document element's name
        self.names: list[str] = []  # every testcase's name attribute, in document order
        self.childless: list[bool] = []  # per testcase: it has no child element
        self.attempts: list[Attempt | None] = []  # of the testcases with children, in document order

    def parse(self, data: bytes) -> None:
        names, childless, attempts = self.names, self.childless, self.attempts
        opened: list[dict[str, str]] = []  # the attributes of a testcase just opened, before its first child
        parser = expat.ParserCreate(namespace_separator="}")

        def first(tag: str, attributes: dict[str, str]) -> None:
            self.root = "{" + tag if "}" in tag else tag  # expat's `uri}name` as ElementTree writes it
            parser.StartElementHandler = start
            start(tag, attributes)

        def start(tag: str, attributes: dict[str, str]) -> None:
            if opened:  # the open testcase's first child: from now on its elements are built
                build(opened.pop(), tag, attributes)
            elif tag == "testcase":
                opened.append(attributes)
                names.append(attributes.get("name", ""))
                childless.append(True)

        def end(tag: str) -> None:
            if opened:  # a testcase without children closes (nothing else can while one is open)
                opened.pop()

        def build(testcase_attributes: dict[str, str], tag: str, attributes: dict[str, str]) -> None:
            childless[-1] = False
            builder = ET.TreeBuilder()
            testcase = builder.start("testcase", testcase_attributes)
            builder.start(tag, attributes)
            slot = len(attempts)
            attempts.append(None)

            def end_inside(tag: str) -> None:
                if builder.end(tag) is testcase:
                    parser.StartElementHandler, parser.EndElementHandler = start, end
                    parser.CharacterDataHandler = None
                    attempts[slot] = _attempt(testcase)
                    for inner in itertools.islice(testcase.iter("testcase"), 1, None):
                        names.append(inner.get("name", ""))
                        childless.append(len(inner) == 0)
                        if len(inner):
                            attempts.append(_attempt(inner))

            parser.StartElementHandler = builder.start
            parser.EndElementHandler = end_inside
            parser.CharacterDataHandler = builder.data

        parser.buffer_text = True  # a text in one piece, as ElementTree's builder joins it
        parser.StartElementHandler = first
        parser.EndElementHandler = end
        parser.Parse(data, True)


_ROOTS = ("testsuites", "testsuite")


def _not_junit(path: Path, root: str) -> str:
    return f"{path.name}: root element is <{root}>, not <testsuites> or <testsuite>"


def read_attempts(path: Path) -> list[Attempt]:
    """Every attempt in one JUnit file; a testcase TestGrid drops (bare skip) yields nothing."""
    return list(read_testcases(path).in_order())


def parse_guarded(path: Path) -> ET.Element:
    """The root of a JUnit file TestGrid would read; MalformedJunit for anything it would refuse."""
    data = _checked_bytes(path)
    root = _parsed(path, lambda: ET.fromstring(data))
    if root.tag not in _ROOTS:
        raise MalformedJunit(_not_junit(path, root.tag))
    return root


def _checked_bytes(path: Path) -> bytes:
    """A JUnit file's bytes, when TestGrid would parse them at all."""
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):  # a FIFO would block the reader forever
        raise MalformedJunit(f"{path.name}: not a regular file")
    if info.st_size > MAX_JUNIT_BYTES:
        raise MalformedJunit(f"{path.name}: too large")
    data = path.read_bytes()
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:  # JUnit has no DTD; entities are how XML bombs expand
        raise MalformedJunit(f"{path.name}: has a DOCTYPE or ENTITY declaration; JUnit needs neither")
    return data


def _parsed(path: Path, parse: Callable[[], _T]) -> _T:
    """What `parse` returns; a MalformedJunit naming the file for what it refuses."""
    try:
        return parse()
    except (ET.ParseError, expat.ExpatError) as err:
        raise MalformedJunit(f"{path.name}: {err}") from None
    except (LookupError, ValueError, RecursionError) as err:  # e.g. encoding="bogus-enc"
        raise MalformedJunit(f"{path.name}: {str(err)[:200] or type(err).__name__}") from None


def _attempt(testcase: ET.Element) -> Attempt | None:
    """A testcase with children as TestGrid reads it."""
    # One pass over the children: ElementPath lookups cost more than the XML parse on large files.
    properties: dict[str, str] = {}
    error = failure = skipped = None
    for child in testcase:
        if child.tag == "properties":
            for prop in child:
                properties[prop.get("name", "")] = prop.get("value", "")
        elif child.tag == "error":
            error = child
        elif child.tag == "failure":
            failure = child
        elif child.tag == "skipped":
            skipped = child
    key = row_key(testcase.get("name", ""))
    problem = failure if error is None else error
    if problem is not None:
        text = _text(testcase, problem, properties)
        return Attempt(key, _cell(Status.FAIL, text, properties), properties, elide(text, MAX_TEXT_CHARS))
    if skipped is None:
        return Attempt(key, _cell(Status.PASS, "", properties), properties)
    # A bare skip is Ginkgo's focus/skip artifact: TestGrid leaves no cell at all.
    if not (skipped.text or "").strip() and skipped.get("message", "") in ("", "skipped"):
        return None
    return Attempt(key, _cell(Status.SKIP, _text(testcase, skipped, properties), properties), properties)


def _text(testcase: ET.Element, detail: ET.Element, properties: dict[str, str]) -> str:
    """The attempt's whole message, marked when the run cut it off."""
    message = _message(testcase, detail)
    if properties.get(_INTERRUPTED) == "true":
        return f"interrupted: {message}"
    if properties.get(_TIMED_OUT) == "true":
        return f"timed out: {message}"
    return message


def _cell(status: Status, text: str, properties: dict[str, str]) -> Cell:
    interrupted = properties.get(_INTERRUPTED) == "true"
    if status is Status.PASS:
        return Cell(status, interrupted=True) if interrupted else PASS
    icon = "S" if status is Status.SKIP else ("F" if text else "")
    failed = status is Status.FAIL
    return Cell(status, elide(text), icon, properties.get(_DIAGNOSTICS, ""), interrupted,
                properties.get(_FAILURE_CLASS, "") if failed else "",
                properties.get(_FAILURE_EVIDENCE, "") if failed else "")


def _message(testcase: ET.Element, detail: ET.Element | None) -> str:
    """TestGrid's choice: the detail's message and body, else system-err, else system-out."""
    if detail is not None:
        text = "\n".join(part for part in (detail.get("message", ""), (detail.text or "").strip()) if part)
        if text:
            return text
    for stream in ("system-err", "system-out"):
        text = (testcase.findtext(stream) or "").strip()
        if text:
            return text
    return ""


def elide(message: str, limit: int = MESSAGE_CHARS) -> str:
    """Keep the start and the end of a long message, as TestGrid does."""
    if len(message) <= limit:
        return message
    head = (limit - 3) // 2
    return message[:head] + "..." + message[len(message) - (limit - 3 - head) :]


def merge(cells: Sequence[Cell]) -> Cell:
    """TestGrid's MergeCells(flaky=true): a pass/fail mix is FLAKY; the icon is `passes/attempts`."""
    if len(cells) == 1:
        return cells[0]
    current = Status.NO_RESULT
    passes = failures = 0
    pass_message = diagnostics = ""
    first_failure: Cell | None = None
    for cell in cells:
        if SEVERITY[cell.status] >= SEVERITY[current]:
            current = cell.status
        if cell.status.passing:
            passes += 1
            pass_message = pass_message or cell.message
        elif cell.status.failing:
            failures += 1
            if first_failure is None or (cell.message and not first_failure.message):
                first_failure = cell  # the first failure that says something speaks for the cell
            diagnostics = diagnostics or cell.diagnostics
    icon = f"{passes}/{len(cells)}"
    detail = (first_failure.message if first_failure is not None else "") or pass_message
    return Cell(
        Status.FLAKY if passes and failures else current,
        elide(f"{icon} runs passed" + (f": {detail}" if detail else "")),
        icon,
        diagnostics,
        any(cell.interrupted for cell in cells),
        first_failure.failure_class if first_failure is not None else "",
        first_failure.evidence if first_failure is not None else "",
    )
