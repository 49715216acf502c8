"""The results sink (controller only): every attempt appended to the event log as tests finish; that log is how a
phase of `winsuite run` hands its rows to the run, whose build writes them. Plain pytest with --results-dir has no run
to hand them to: its rows go to a build of its own (JUnit only), as pytest's junitxml writes its file."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

import pytest

from winsuite.policy.run_config import Output
from winsuite.results import events
from winsuite.results import junit
from winsuite.results.build import Build
from winsuite.results.events import INTERRUPT_REASON_FILE
from winsuite.results.events import Event
from winsuite.results.events import events_name
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite_reports.conventions import RowProperties

# The user property workers attach to every winsuite test's reports (see plugin/collection.py).
WINSUITE_PROPERTY = "winsuite"
NAMESPACE_PROPERTY = "winsuite.namespace"  # a test's namespace, as its fixture names it
NAME_KEY, ROW_KEY = "name", "row"  # its full name, and its row properties as JUnit spells them


def winsuite_properties(user_properties: list[tuple[str, object]]) -> dict[str, Any] | None:
    """The winsuite test's properties among an item's or a report's user properties (None: not a winsuite test)."""
    for key, value in user_properties:
        if key == WINSUITE_PROPERTY and isinstance(value, dict):
            return value
    return None


def plain_build(output: Output) -> Build:
    """The build of plain pytest with --results-dir: its JUnit only, stamped with the session's start as pytest's
    junitxml stamps its file."""
    return Build(output, timestamp=time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()))


def _skip_reason(report: pytest.TestReport) -> str:
    if isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return str(report.longrepr or "")


def _failure(report: pytest.TestReport) -> tuple[str, str]:
    crash = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", "") or report.longreprtext
    phase = "" if report.when == "call" else f"failed on {report.when}: "
    return phase + junit.short(message), report.longreprtext


@dataclasses.dataclass
class _Pending:
    """The phases (setup, call, teardown) of one attempt, until teardown closes it."""

    properties: dict[str, Any]
    outcome: Outcome = Outcome.PASSED
    duration: float = 0.0
    message: str = ""
    details: str = ""
    extra: dict[str, str] = dataclasses.field(default_factory=dict)
    namespaces: list[str] = dataclasses.field(default_factory=list)
    failed_during: str = ""
    started: float = 0.0  # seconds since the epoch, when its setup began

    def add(self, report: pytest.TestReport) -> None:
        self.started = self.started or time.time() - report.duration
        self.duration += report.duration
        for key, value in report.user_properties:
            if key == NAMESPACE_PROPERTY and value not in self.namespaces:
                self.namespaces.append(str(value))
            elif key.startswith("winsuite.") and isinstance(value, str):
                self.extra[key.removeprefix("winsuite.")] = value
        failed = report.failed or str(report.outcome) == "rerun"
        if failed and self.outcome is not Outcome.FAILED:
            self.outcome = Outcome.FAILED
            self.message, self.details = _failure(report)
            self.failed_during = report.when
        elif report.skipped and self.outcome is Outcome.PASSED:
            self.outcome = Outcome.SKIPPED
            self.message = _skip_reason(report)


class ResultsWriter:
    """Registered on the controller only: workers never write results files."""

    def __init__(self, results_dir: Path, junit_name: str, config: pytest.Config | None = None,
                 build: Build | None = None) -> None:
        self.results_dir = results_dir
        self.config = config  # its pytest_winsuite_result hook hears of every recorded attempt
        self.junit_name = junit_name
        self.build = build  # plain pytest's own (None in a phase of `winsuite run`: the run's build has the rows)
        self.events_path = results_dir / events_name(junit_name)
        self.attempts: list[Attempt] = []
        self._pending: dict[tuple[str, int], _Pending] = {}
        self._running: dict[str, float] = {}
        results_dir.mkdir(parents=True, exist_ok=True)
        self._events = self.events_path.open("a", encoding="utf-8")
        if build is not None:
            build.judged(junit_name, [])  # a valid, empty file from the first moment

    # -- event log ---------------------------------------------------------------------------------
    def _event(self, event: Event) -> None:
        self._events.write(event.to_line())
        self._events.flush()
        os.fsync(self._events.fileno())

    # -- hooks ---------------------------------------------------------------------------------------
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not session.config.pluginmanager.has_plugin("dsession"):  # with xdist, workers collect
            self._event(events.collected(len(session.items)))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if not getattr(self, "_collected", False):
            self._collected = True
            self._event(events.collected(len(ids)))

    def pytest_runtest_logstart(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        self._running[nodeid] = time.monotonic()  # this attempt's start
        self._event(events.started(nodeid))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = winsuite_properties(report.user_properties)
        if props is None:  # not a winsuite test: no row, but it is not left "running" either
            if report.when == "teardown":
                self._running.pop(report.nodeid, None)
                self._event(events.done(report.nodeid))
            return
        attempt = 1
        for key, value in report.user_properties:
            if key == "winsuite.attempt":
                attempt = int(str(value))
        pending = self._pending.setdefault((report.nodeid, attempt), _Pending(props))
        pending.add(report)
        if report.when == "teardown":
            self._close(report.nodeid, attempt, final=not _will_rerun(report))

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        reason = self._interrupt_reason(exitstatus)
        self._open_unreported(session)
        for (nodeid, attempt), pending in list(self._pending.items()):
            pending.outcome = Outcome.INTERRUPTED
            # It ran until now, not only for the phases that reported: its evidence is read over all of that.
            pending.duration = max(pending.duration, time.time() - pending.started)
            pending.message = f"interrupted: {reason}"
            pending.extra["interrupted"] = "true"
            self._close(nodeid, attempt, final=True)
        self._event(events.finished(int(exitstatus), reason if exitstatus == pytest.ExitCode.INTERRUPTED else ""))
        self._events.close()

    # -- internals ------------------------------------------------------------------------------------
    def _open_unreported(self, session: pytest.Session) -> None:
        """Tests a signal cut off before their setup reported have no phase yet: they are opened from their items, so
        that they are closed as interrupted like the others (with xdist the controller has no items: the runner
        closes those from the event log)."""
        items = {item.nodeid: item for item in session.items}
        reported = {nodeid for nodeid, _ in self._pending}
        for nodeid, began in self._running.items():
            item = items.get(nodeid)
            props = winsuite_properties(item.user_properties) if item is not None else None
            if nodeid in reported or item is None or props is None:
                continue
            pending = self._pending[nodeid, 1 + sum(a.nodeid == nodeid for a in self.attempts)] = _Pending(props)
            pending.started = time.time() - (time.monotonic() - began)
            pending.namespaces = [str(value) for key, value in item.user_properties if key == NAMESPACE_PROPERTY]

    def _interrupt_reason(self, exitstatus: int) -> str:
        path = self.results_dir / INTERRUPT_REASON_FILE
        if path.exists():
            return path.read_text().strip()
        return "the run was interrupted" if exitstatus == pytest.ExitCode.INTERRUPTED else "the session ended"

    def _close(self, nodeid: str, attempt_number: int, final: bool) -> None:
        pending = self._pending.pop((nodeid, attempt_number))
        # What the test's own run added (diagnostics, timed-out, interrupted) over what collection said of it.
        properties = RowProperties.from_junit({**pending.properties[ROW_KEY], **pending.extra})
        attempt = Attempt(
            name=str(pending.properties[NAME_KEY]), nodeid=nodeid, outcome=pending.outcome,
            attempt=attempt_number, duration=pending.duration, message=pending.message,
            details=pending.details, properties=properties, namespaces=tuple(pending.namespaces),
            started=pending.started,
            failed_during=pending.failed_during,
        )
        self.attempts.append(attempt)
        if final:
            self._running.pop(nodeid, None)
        recorded = events.attempt_recorded(attempt, final=final)
        self._event(recorded)
        if self.config is not None:
            self.config.hook.pytest_winsuite_result(config=self.config, result=recorded.fields["result"])
        if self.build is not None:
            self.build.row_finished(self.junit_name, attempt)


def _will_rerun(report: pytest.TestReport) -> bool:
    return any(key == "winsuite.will-rerun" for key, _ in report.user_properties)
