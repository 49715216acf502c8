"""The results protocol between a phase (the pytest process that writes) and the controller (which reads).

A phase appends one JSON line per event to `winsuite-events_NN.jsonl`; the controller tails it for its rows as they
finish (its build writes them) and reads it back to close the tests of a phase that was killed. The kinds are closed:
an unknown one is an error.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import time
from typing import Any

from winsuite.results.model import Attempt

# Written by the controller before it interrupts a phase, so the phase's rows can say why.
INTERRUPT_REASON_FILE = "winsuite-interrupt-reason.txt"


class EventKind(enum.Enum):
    COLLECTED = "collected"  # count: how many tests the phase collected
    START = "start"  # nodeid: a test began
    DONE = "done"  # nodeid: a test without a row (not a winsuite test) ended
    ATTEMPT = "attempt"  # result: one attempt's row (Attempt); final: whether the test is over
    FINISHED = "finished"  # exitstatus, interrupted: the pytest session ended


class ProtocolError(ValueError):
    """An event the protocol does not define: a phase and a controller of different versions, or a bug."""


@dataclasses.dataclass(frozen=True)
class Event:
    kind: EventKind
    fields: dict[str, Any]
    time: float = dataclasses.field(default_factory=time.time)

    def to_line(self) -> str:
        return json.dumps({"event": self.kind.value, "time": self.time, **self.fields}) + "\n"

    @staticmethod
    def from_line(line: str | bytes) -> Event | None:
        """The event of one log line; None for a torn line (a phase killed mid-write), ProtocolError if unknown."""
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            return None
        if not isinstance(raw, dict):
            raise ProtocolError(f"event log line is not an object: {str(line)[:80]!r}")
        try:
            kind = EventKind(raw.pop("event", None))
        except ValueError:
            raise ProtocolError(f"unknown event {str(line)[:80]!r}; known: "
                                f"{', '.join(k.value for k in EventKind)}") from None
        return Event(kind, raw, float(raw.pop("time", 0.0)))

    @property
    def attempt(self) -> Attempt:
        return Attempt.from_dict(self.fields["result"])

    @property
    def final(self) -> bool:
        return bool(self.fields.get("final"))


def collected(count: int) -> Event:
    return Event(EventKind.COLLECTED, {"count": count})


def started(nodeid: str) -> Event:
    return Event(EventKind.START, {"nodeid": nodeid})


def done(nodeid: str) -> Event:
    return Event(EventKind.DONE, {"nodeid": nodeid})


def attempt_recorded(attempt: Attempt, *, final: bool) -> Event:
    return Event(EventKind.ATTEMPT, {"final": final, "result": json.loads(attempt.to_json())})


def finished(exitstatus: int, interrupted: str) -> Event:
    return Event(EventKind.FINISHED, {"exitstatus": exitstatus, "interrupted": interrupted})


def events_name(junit_name: str) -> str:
    """The event log beside a JUnit file: junit_01.xml -> winsuite-events_01.jsonl."""
    return junit_name.replace("junit", "winsuite-events").replace(".xml", ".jsonl")
