"""Reading a phase's event log back: its attempts, the tests it started but never finished, its end state."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

from winsuite.run.results.model import Attempt
from winsuite.run.results.model import Outcome


@dataclasses.dataclass
class PhaseRecord:
    attempts: list[Attempt] = dataclasses.field(default_factory=list)
    collected: int | None = None
    finished: bool = False  # the pytest session ended cleanly enough to say so
    interrupted: str = ""
    unfinished: list[str] = dataclasses.field(default_factory=list)  # node ids started, never closed


def read_events(path: Path) -> PhaseRecord:
    """Tolerates a torn last line: the writer may have been killed mid-write."""
    record = PhaseRecord()
    open_nodes: dict[str, None] = {}
    if not path.exists():
        return record
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        kind = event.get("event")
        if kind == "collected":
            record.collected = int(event["count"])
        elif kind == "start":
            open_nodes[event["nodeid"]] = None
        elif kind == "done":  # a test that is not a winsuite test ended
            open_nodes.pop(event["nodeid"], None)
        elif kind == "attempt":
            attempt = Attempt.from_dict(event["result"])
            record.attempts.append(attempt)
            if event.get("final"):
                open_nodes.pop(attempt.nodeid, None)
        elif kind == "finished":
            record.finished = True
            record.interrupted = event.get("interrupted", "")
    record.unfinished = list(open_nodes)
    return record


def close_unfinished(record: PhaseRecord, reason: str, name_of: Callable[[str], str]) -> list[Attempt]:
    """Rows for the tests a killed phase left running: marked interrupted, so the JUnit is complete."""
    rows = [
        Attempt(name=name_of(nodeid), nodeid=nodeid, outcome=Outcome.INTERRUPTED,
                attempt=1 + sum(a.nodeid == nodeid for a in record.attempts),
                message=f"interrupted: {reason}", properties={"interrupted": "true"})
        for nodeid in record.unfinished
    ]
    record.attempts.extend(rows)
    record.unfinished = []
    return rows


def final_attempts(attempts: list[Attempt]) -> dict[str, list[Attempt]]:
    """Every attempt per test (by full name), in order."""
    by_test: dict[str, list[Attempt]] = {}
    for attempt in attempts:
        by_test.setdefault(attempt.name, []).append(attempt)
    return by_test


def verdict(attempts: list[Attempt]) -> str:
    """passed, flaky (failed, then passed), failed, skipped or interrupted: how a test ended up."""
    last = attempts[-1].outcome
    if last is Outcome.PASSED:
        return "flaky" if any(a.outcome is Outcome.FAILED for a in attempts) else "passed"
    return str(last.value)
