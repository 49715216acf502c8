"""ginkgo's JSON report (`--json-report`) read as winsuite attempts: one row per attempt, like native tests.

A spec that needed several attempts (ginkgo --flake-attempts) keeps each failed attempt: ginkgo stores their
failures as AdditionalFailures, in order, before the final outcome.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import re
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
_NAMESPACE_NAMED = re.compile(
    r'(?:Destroying namespace|Collecting events from namespace) "?([a-z0-9][-a-z0-9]{0,62})"?')
_SUITE_SETUP = ("BeforeSuite", "SynchronizedBeforeSuite")


class ReportError(ValueError):
    """A JSON report that is not ginkgo's (or a torn one from a killed run)."""


def spec_name(report: dict[str, Any]) -> str:
    """The full name, as `e2e.test --list-tests` and the progress reporter render it."""
    texts = [str(t) for t in report.get("ContainerHierarchyTexts") or []]
    return " ".join([*texts, str(report.get("LeafNodeText") or "")]).strip()


def _suites(path: Path) -> list[Any]:
    try:
        suites = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ReportError(f"cannot read ginkgo's report {path}: {err}") from err
    if not isinstance(suites, list):
        raise ReportError(f"{path}: not a ginkgo JSON report (expected a list of suites)")
    return suites


def spec_reports(path: Path) -> Iterator[dict[str, Any]]:
    for suite in _suites(path):
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
    namespaces, started = spec_namespaces(report), _seconds(report.get("StartTime"))
    rows = []
    for number, earlier in enumerate(retried, 1):
        earlier_message, earlier_details = _message(earlier.get("Failure"))
        rows.append(Attempt(name, nodeid, Outcome.FAILED, attempt=number, message=earlier_message,
                            details=earlier_details, properties=UPSTREAM, namespaces=namespaces, started=started))
    number = len(retried) + 1
    properties = dataclasses.replace(UPSTREAM, interrupted=outcome is Outcome.INTERRUPTED,
                                     timed_out=state == "timedout")
    if outcome is Outcome.INTERRUPTED:
        message = f"interrupted: {message}" if message else "interrupted"
    rows.append(Attempt(name, nodeid, outcome, attempt=number, duration=duration, message=message,
                        details=details, properties=properties, namespaces=namespaces, started=started))
    return rows


def spec_namespaces(report: dict[str, Any]) -> tuple[str, ...]:
    """The namespaces the e2e framework made for a spec, as it names them when it destroys them (a `By` step of
    every spec with a namespace, test/e2e/framework/framework.go) or dumps them after a failure (debug/dump.go)."""
    texts = [str(event.get("Message") or "") for event in report.get("SpecEvents") or []]
    texts.append(captured_output(report))
    found = [match for text in texts for match in _NAMESPACE_NAMED.findall(text)]
    return tuple(dict.fromkeys(found))


def suite_setup_failure(path: Path) -> str | None:
    """What ginkgo's BeforeSuite or SynchronizedBeforeSuite failed with, when it failed (then no spec ran)."""
    for suite in _suites(path):
        for report in (suite or {}).get("SpecReports") or []:
            if report.get("LeafNodeType") in _SUITE_SETUP and report.get("State") not in ("passed", "skipped"):
                message, _ = _message(report.get("Failure"))
                return f"ginkgo's {report.get('LeafNodeType')} {report.get('State')}: {message}"
    return None


def _seconds(timestamp: Any) -> float:
    """Seconds since the epoch of a time ginkgo wrote (RFC 3339), 0 when there is none (Go's zero time)."""
    try:
        seconds = datetime.datetime.fromisoformat(str(timestamp)).timestamp()
    except ValueError:
        return 0.0
    return max(seconds, 0.0)


def never_started(report: dict[str, Any]) -> bool:
    """A spec ginkgo skipped because the suite (or the process that drew it) was interrupted or aborted before it,
    or its timeout had passed: skipped with no message or one saying so (it gets no row). A spec e2e.test skips
    says why."""
    if report.get("State") != "skipped":
        return False
    message = str((report.get("Failure") or {}).get("Message") or "").lower()
    return not message or any(word in message for word in _NOT_STARTED)


def captured_output(report: dict[str, Any]) -> str:
    """What e2e.test logged for the spec (the framework's dump of its namespace on failure included)."""
    parts = [str(report.get("CapturedGinkgoWriterOutput") or ""), str(report.get("CapturedStdOutErr") or "")]
    return "\n".join(p for p in parts if p)
