"""Made-up histories written in the prow layout, for the benchmark and the tests (as pytest ships pytester).

A history is one string of cell codes per test, newest build first: P pass · F fail ·
K flaky (a failed attempt, then a passing one) · I infrastructure failure (one-word message) ·
S skip with a reason · X excluded but run and passed · _ no result.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from xml.sax.saxutils import quoteattr

from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import IT_PREFIX
from winsuite_reports.conventions import LATEST_BUILD
from winsuite_reports.conventions import METADATA
from winsuite_reports.conventions import STARTED
from winsuite_reports.conventions import SUITE_NAME
from winsuite_reports.conventions import artifacts_dir
from winsuite_reports.conventions import junit_name

CODES = "PFKISX_"
START = 1_767_225_600  # 2026-01-01 00:00 UTC: the oldest build's start unless told otherwise
FAILURE = "expected the pod to be Running, found Pending"
_FAILING = frozenset("FI")


def build_id(epoch: int) -> str:
    """winsuite's build id: the start time as 14-digit UTC."""
    return time.strftime("%Y%m%d%H%M%S", time.gmtime(epoch))


def write_job(
    root: Path,
    job: str,
    rows: Mapping[str, str],
    *,
    start: int = START,
    every: int = 3600,
    metadata: Mapping[str, object] | None = None,
    properties: Mapping[str, Mapping[str, str]] | None = None,
    messages: Mapping[str, str] | None = None,
    message_of: Callable[[str, int], str] | None = None,
    properties_of: Callable[[str, int, str], Mapping[str, str]] | None = None,
) -> list[str]:
    """Write one job; returns its build ids, newest first. `messages` overrides a row's failure message;
    `message_of(row, n)` and `properties_of(row, n, code)` give them per build (added to `properties`), n counting
    builds from the oldest (0)."""
    lengths = {len(codes) for codes in rows.values()}
    if len(lengths) != 1 or not set("".join(rows.values())) <= set(CODES):
        raise ValueError(f"rows need equal lengths and codes from {CODES}: {dict(rows)}")
    count = lengths.pop()
    ids = []
    for column in range(count):
        started = start + (count - 1 - column) * every
        cells = {name: codes[column] for name, codes in rows.items()}
        number = count - 1 - column
        build_properties = properties
        if properties_of is not None:
            build_properties = {name: {**(properties or {}).get(name, {}), **properties_of(name, number, code)}
                                for name, code in cells.items()}
        build_messages = {name: message_of(name, number) for name in cells} if message_of is not None else messages
        ids.append(
            write_build(root / job, started, cells, metadata=metadata, properties=build_properties,
                        messages=build_messages)
        )
    (root / job / LATEST_BUILD).write_text(ids[0])
    return ids


def write_build(
    job_dir: Path,
    started: int,
    cells: Mapping[str, str],
    *,
    metadata: Mapping[str, object] | None = None,
    properties: Mapping[str, Mapping[str, str]] | None = None,
    messages: Mapping[str, str] | None = None,
) -> str:
    """Write one finished build; it passed unless a cell is F or I. Returns its id."""
    build = build_id(started)
    artifacts = artifacts_dir(job_dir / build)
    artifacts.mkdir(parents=True, exist_ok=True)
    passed = not any(code in _FAILING for code in cells.values())
    meta = {"job": job_dir.name, **(metadata or {})}
    (job_dir / build / STARTED).write_text(json.dumps({"timestamp": started}))
    (job_dir / build / FINISHED).write_text(
        json.dumps(
            {
                "timestamp": started + 600,
                "passed": passed,
                "result": "SUCCESS" if passed else "FAILURE",
                "metadata": meta,
            }
        )
    )
    (artifacts / METADATA).write_text(json.dumps(meta))
    cases = [
        _testcase(name, code, (properties or {}).get(name, {}), (messages or {}).get(name, FAILURE))
        for name, code in cells.items()
    ]
    (artifacts / junit_name(1)).write_text(
        f'<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="{SUITE_NAME}">'
        + "".join(cases)
        + "</testsuite></testsuites>\n",
        encoding="utf-8",
    )
    return build


def _testcase(name: str, code: str, properties: Mapping[str, str], message: str) -> str:
    props = dict(properties)
    if code == "X":
        props.setdefault("excluded", "known not to work on Windows")
    if code == "K":
        return _case(name, f"<failure message={quoteattr(message)}/>", props) + _case(name, "", props)
    body = {
        "P": "",
        "X": "",
        "F": f"<failure message={quoteattr(message)}/>",
        "I": '<failure message="Timeout"/>',
        "S": '<skipped message="requires a Windows node (found linux)"/>',
    }.get(code)
    return "" if body is None else _case(name, body, props)


def _case(name: str, body: str, properties: Mapping[str, str]) -> str:
    props = "".join(f"<property name={quoteattr(k)} value={quoteattr(v)}/>" for k, v in properties.items())
    props = f"<properties>{props}</properties>" if props else ""
    return (
        f'<testcase name={quoteattr(IT_PREFIX + name)} classname="{SUITE_NAME}" time="1.0">'
        f"{props}{body}</testcase>"
    )
