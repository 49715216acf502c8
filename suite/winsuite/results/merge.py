"""Reading a phase's event log back: its attempts, the tests it started but never finished, its end state."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

from winsuite.inputs.engines import Engine
from winsuite.results.events import Event
from winsuite.results.events import EventKind
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite_reports.conventions import CROSS_CHECK_ENGINE
from winsuite_reports.conventions import CROSS_CHECK_PREFIX as CROSS_CHECK_PREFIX  # noqa: PLC0414  # re-exported
from winsuite_reports.conventions import RowProperties


@dataclasses.dataclass
class PhaseRecord:
    attempts: list[Attempt] = dataclasses.field(default_factory=list)
    collected: int | None = None
    finished: bool = False  # the pytest session ended cleanly enough to say so
    interrupted: str = ""
    # node ids started and never closed, with when they started (seconds since the epoch)
    unfinished: list[tuple[str, float]] = dataclasses.field(default_factory=list)


def _on_collected(record: PhaseRecord, event: Event, running: dict[str, float]) -> None:
    record.collected = int(event.fields["count"])


def _on_start(record: PhaseRecord, event: Event, running: dict[str, float]) -> None:
    running[event.fields["nodeid"]] = event.time


def _on_done(record: PhaseRecord, event: Event, running: dict[str, float]) -> None:
    running.pop(event.fields["nodeid"], None)


def _on_attempt(record: PhaseRecord, event: Event, running: dict[str, float]) -> None:
    attempt = event.attempt
    record.attempts.append(attempt)
    if event.final:
        running.pop(attempt.nodeid, None)


def _on_finished(record: PhaseRecord, event: Event, running: dict[str, float]) -> None:
    record.finished = True
    record.interrupted = str(event.fields.get("interrupted", ""))


HANDLERS: dict[EventKind, Callable[[PhaseRecord, Event, dict[str, float]], None]] = {
    EventKind.COLLECTED: _on_collected,
    EventKind.START: _on_start,
    EventKind.DONE: _on_done,
    EventKind.ATTEMPT: _on_attempt,
    EventKind.FINISHED: _on_finished,
}


def read_events(path: Path) -> PhaseRecord:
    """Tolerates a torn line (the writer may have been killed mid-write); an unknown event is a ProtocolError."""
    record = PhaseRecord()
    running: dict[str, float] = {}  # node ids started and not yet over, in order, with when they started
    if not path.exists():
        return record
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        event = Event.from_line(line)
        if event is not None:
            HANDLERS[event.kind](record, event, running)
    record.unfinished = list(running.items())
    return record


def close_unfinished(record: PhaseRecord, reason: str, name_of: Callable[[str], str]) -> list[Attempt]:
    """Rows for the tests a killed phase left running: marked interrupted, so the JUnit is complete. Each lasted
    until now, when its phase is closed: what was observed up to its cut (an API server that stopped answering)
    falls within it."""
    now = time.time()
    rows = [
        Attempt(name=name_of(nodeid), nodeid=nodeid, outcome=Outcome.INTERRUPTED,
                attempt=1 + sum(a.nodeid == nodeid for a in record.attempts),
                duration=max(0.0, now - started) if started else 0.0, started=started,
                message=f"interrupted: {reason}", properties=RowProperties(interrupted=True))
        for nodeid, started in record.unfinished
    ]
    record.attempts.extend(rows)
    record.unfinished = []
    return rows


def final_attempts(attempts: list[Attempt]) -> dict[str, list[Attempt]]:
    """Every attempt per test, in order: by full name, and by engine too where both engines ran one test."""
    by_test = _by_name_and_engine(attempts)
    engines: dict[str, int] = {}
    for name, _ in by_test:
        engines[name] = engines.get(name, 0) + 1
    return {(name if engines[name] == 1 else f"{name} ({engine} engine)"): rows
            for (name, engine), rows in by_test.items()}


def engine_of(attempt: Attempt) -> str:
    """native, upstream, or both (a cross-check row)."""
    return attempt.properties.engine or Engine.NATIVE


def cross_checks(attempts: list[Attempt]) -> list[Attempt]:
    """For each test both engines reported: a row that passes when their verdicts agree (a flake counts as its final
    pass) and fails on any difference, a skip on one side and a run on the other included, saying both outcomes and
    the skip's reason; a test one engine left interrupted, or that neither ran (both skipped), is a skipped row saying
    it was not compared: nothing ran, so nothing agreed."""
    by_test: dict[str, dict[str, list[Attempt]]] = {}
    for (name, engine), rows in _by_name_and_engine(attempts).items():
        by_test.setdefault(name, {})[engine] = rows
    checks = []
    for name, by_engine in by_test.items():
        native, upstream = by_engine.get(Engine.NATIVE), by_engine.get(Engine.UPSTREAM)
        if native is None or upstream is None:
            continue
        sides = {Engine.NATIVE: native, Engine.UPSTREAM: upstream}
        verdicts = {engine: _compared(rows) for engine, rows in sides.items()}
        said = ", ".join(f"{engine} {_said(verdicts[engine], rows)}" for engine, rows in sides.items())
        if "interrupted" in verdicts.values():
            outcome, message = Outcome.SKIPPED, f"not compared: {said}"
        elif set(verdicts.values()) == {"skipped"}:
            outcome, message = Outcome.SKIPPED, f"nothing to compare: {said}"
        elif len(set(verdicts.values())) == 1:
            outcome, message = Outcome.PASSED, ""
        else:
            outcome, message = Outcome.FAILED, f"the engines disagree: {said}"
        checks.append(Attempt(f"{CROSS_CHECK_PREFIX}{name}", "cross-check", outcome, message=message,
                              details=message, properties=RowProperties(engine=CROSS_CHECK_ENGINE)))
    return checks


def _compared(rows: list[Attempt]) -> str:
    """A test's verdict as the cross-check compares it: a flake as the pass it ended with."""
    outcome = verdict(rows)
    return "passed" if outcome == "flaky" else outcome


def _said(outcome: str, rows: list[Attempt]) -> str:
    return f"skipped ({rows[-1].message})" if outcome == "skipped" else outcome


def _by_name_and_engine(attempts: list[Attempt]) -> dict[tuple[str, str], list[Attempt]]:
    grouped: dict[tuple[str, str], list[Attempt]] = {}
    for attempt in attempts:
        grouped.setdefault((attempt.name, engine_of(attempt)), []).append(attempt)
    return grouped


def verdict(attempts: list[Attempt]) -> str:
    """passed, flaky (failed, then passed), failed, skipped or interrupted: how a test ended up."""
    last = attempts[-1].outcome
    if last is Outcome.PASSED:
        return "flaky" if any(a.outcome is Outcome.FAILED for a in attempts) else "passed"
    return str(last.value)
