"""ginkgo's JSON report (`--json-report`) read as winsuite attempts: one row per attempt, like native tests.

A spec that needed several attempts (ginkgo --flake-attempts) keeps each failed attempt: ginkgo stores their
failures as AdditionalFailures, in order, before the final outcome.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from winsuite.inputs.engines import Engine
from winsuite.results.junit import short
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite_reports.conventions import RowProperties

# ginkgo's spec states -> winsuite outcomes (types.SpecState).
_OUTCOMES = {
    "passed": Outcome.PASSED,
    "skipped": Outcome.SKIPPED,
    "pending": Outcome.SKIPPED,
    "failed": Outcome.FAILED,
    "panicked": Outcome.FAILED,
    "timedout": Outcome.FAILED,
    "aborted": Outcome.FAILED,
    "interrupted": Outcome.INTERRUPTED,
}
# What ginkgo says of specs it never started because the suite was interrupted or aborted.
_NOT_STARTED = ("interrupt", "abort")

UPSTREAM = RowProperties(engine=Engine.UPSTREAM)  # what every row of an upstream spec carries


class ReportError(ValueError):
    """A JSON report that is not ginkgo's (or a torn one from a killed run)."""


def spec_name(report: dict[str, Any]) -> str:
    """The full name, as `e2e.test --list-tests` and the progress reporter render it."""
    texts = [str(t) for t in report.get("ContainerHierarchyTexts") or []]
    return " ".join([*texts, str(report.get("LeafNodeText") or "")]).strip()


def spec_reports(path: Path) -> Iterator[dict[str, Any]]:
    try:
        suites = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ReportError(f"cannot read ginkgo's report {path}: {err}") from err
    if not isinstance(suites, list):
        raise ReportError(f"{path}: not a ginkgo JSON report (expected a list of suites)")
    for suite in suites:
        for report in (suite or {}).get("SpecReports") or []:
            if report.get("LeafNodeType") == "It":
                yield report


def _message(failure: dict[str, Any] | None) -> tuple[str, str]:
    failure = failure or {}
    message = str(failure.get("Message") or "")
    location = failure.get("Location") or {}
    where = f"{location.get('FileName')}:{location.get('LineNumber')}" if location.get("FileName") else ""
    details = message + (f"\n\nat {where}" if where else "")
    return short(message), details


def attempts_of(report: dict[str, Any], nodeid: str) -> list[Attempt]:
    """The rows of one spec: each failed attempt before the last, then the last (flake attempts included)."""
    name = spec_name(report)
    state = str(report.get("State") or "")
    outcome = _OUTCOMES.get(state)
    if outcome is None:
        raise ReportError(f"spec {name!r}: unknown ginkgo state {state!r}")
    message, details = _message(report.get("Failure"))
    if outcome is Outcome.SKIPPED and not message:
        message = "skipped by e2e.test"
    duration = float(report.get("RunTime") or 0) / 1e9  # nanoseconds
    attempts_made = max(int(report.get("NumAttempts") or 1), 1)
    retried = [f for f in report.get("AdditionalFailures") or [] if f.get("State") != "passed"][: attempts_made - 1]
    rows = []
    for number, earlier in enumerate(retried, 1):
        earlier_message, earlier_details = _message(earlier.get("Failure"))
        rows.append(Attempt(name, nodeid, Outcome.FAILED, attempt=number, message=earlier_message,
                            details=earlier_details, properties=UPSTREAM))
    number = len(retried) + 1
    properties = dataclasses.replace(UPSTREAM, interrupted=outcome is Outcome.INTERRUPTED,
                                     timed_out=state == "timedout")
    if outcome is Outcome.INTERRUPTED:
        message = f"interrupted: {message}" if message else "interrupted"
    rows.append(Attempt(name, nodeid, outcome, attempt=number, duration=duration, message=message,
                        details=details, properties=properties))
    return rows


def never_started(report: dict[str, Any]) -> bool:
    """A spec ginkgo skipped because the suite was interrupted or aborted before it (it gets no row)."""
    if report.get("State") != "skipped":
        return False
    message = str((report.get("Failure") or {}).get("Message") or "").lower()
    return any(word in message for word in _NOT_STARTED)


def captured_output(report: dict[str, Any]) -> str:
    """What e2e.test logged for the spec (the framework's dump of its namespace on failure included)."""
    parts = [str(report.get("CapturedGinkgoWriterOutput") or ""), str(report.get("CapturedStdOutErr") or "")]
    return "\n".join(p for p in parts if p)
