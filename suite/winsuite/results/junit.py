"""JUnit XML that TestGrid reads: `[It] <full name>` rows, short failure messages, every skip with its reason."""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from junit_xml import TestCase
from junit_xml import TestSuite

from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite_reports.conventions import IT_PREFIX
from winsuite_reports.conventions import SUITE_NAME
from winsuite_reports.conventions import RowProperties
from winsuite_reports.conventions import RowProperty
from winsuite_reports.junit import MalformedJunit
from winsuite_reports.junit import parse_guarded

MAX_MESSAGE = 300


# Characters XML 1.0 does not allow (terminal escapes in logs, NULs): a file with one would be "malformed".
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    return _NOT_XML.sub("", text)


def short(text: str, limit: int = MAX_MESSAGE) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def row_name(full_name: str) -> str:
    return IT_PREFIX + full_name


def _testcase(attempt: Attempt) -> TestCase:
    attempt = dataclasses.replace(attempt, name=xml_safe(attempt.name), message=xml_safe(attempt.message),
                                  details=xml_safe(attempt.details))
    case = TestCase(row_name(attempt.name), classname=SUITE_NAME, elapsed_sec=round(attempt.duration, 3) or None,
                    status=attempt.outcome.value)
    if attempt.outcome is Outcome.FAILED:
        case.add_failure_info(message=short(attempt.message) or "failed", output=attempt.details or None)
    elif attempt.outcome is Outcome.INTERRUPTED:
        case.add_failure_info(message=short(attempt.message) or "interrupted", output=attempt.details or None)
    elif attempt.outcome is Outcome.SKIPPED:
        # An empty skip message would make TestGrid drop the cell; a skip always says why.
        case.add_skipped_info(message=short(attempt.message) or "skipped without a reason")
    return case


def render(attempts: Iterable[Attempt], timestamp: str | None = None) -> bytes:
    attempts = list(attempts)
    suite = TestSuite(SUITE_NAME, [_testcase(a) for a in attempts], timestamp=timestamp)
    suite_el = suite.build_xml_doc()
    # junit-xml has no testcase-level <properties>; TestGrid reads them, so add them here.
    for case_el, attempt in zip(suite_el.iter("testcase"), attempts, strict=True):
        holder = ET.Element("properties")
        for key, value in attempt.properties.to_junit(attempt.attempt).items():
            ET.SubElement(holder, "property", name=key, value=xml_safe(value))
        case_el.insert(0, holder)
    root = ET.Element("testsuites", {
        "tests": suite_el.get("tests", "0"), "failures": suite_el.get("failures", "0"),
        "errors": suite_el.get("errors", "0"), "disabled": suite_el.get("disabled", "0"),
        "time": suite_el.get("time", "0"),
    })
    root.append(suite_el)
    ET.indent(root)
    return bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(path: Path, data: bytes) -> None:
    """Readers (and a crash) only ever see a complete file; its mode follows the umask as any other file of the
    build does (mkstemp's own 0600 would hide it from an uploader or web server running as another user)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write(path: Path, attempts: Iterable[Attempt], timestamp: str | None = None) -> None:
    write_atomically(path, render(attempts, timestamp))


def read(path: Path) -> list[Attempt]:
    """The attempts of a JUnit file winsuite wrote (a shard's build, to merge), with their properties; the file is
    checked as TestGrid would (MalformedJunit), so a broken shard is named, not half read."""
    return _attempts(parse_guarded(path), path.name)


def parse(data: bytes, name: str) -> list[Attempt]:
    """`read` of a JUnit file held in memory (a shard's build as its pod sent it); MalformedJunit names `name`."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as err:
        raise MalformedJunit(f"{name}: {err}") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise MalformedJunit(f"{name}: the root element is <{root.tag}>, not <testsuites> or <testsuite>")
    return _attempts(root, name)


def _attempts(root: ET.Element, name: str) -> list[Attempt]:
    rows = []
    for testcase in root.iter("testcase"):
        written = {p.get("name", ""): p.get("value", "") for p in testcase.iter("property")}
        properties = RowProperties.from_junit(written)
        problem = testcase.find("failure")
        if problem is None:
            problem = testcase.find("error")
        skipped = testcase.find("skipped")
        if problem is not None:
            outcome = Outcome.INTERRUPTED if properties.interrupted else Outcome.FAILED
            message, details = problem.get("message", ""), problem.text or ""
        elif skipped is not None:
            outcome, message, details = Outcome.SKIPPED, skipped.get("message", ""), ""
        else:
            outcome, message, details = Outcome.PASSED, "", ""
        try:
            attempt = int(written.get(RowProperty.ATTEMPT, "1"))
            duration = float(testcase.get("time") or 0.0)
        except ValueError as err:
            raise MalformedJunit(f"{name}: testcase {testcase.get('name', '')!r}: {err}") from None
        rows.append(Attempt(testcase.get("name", "").removeprefix(IT_PREFIX), "", outcome, attempt, duration,
                            message, details, properties))
    return rows
