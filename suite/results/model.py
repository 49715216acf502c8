"""One attempt of one test: the unit every results file is made of."""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any


class Outcome(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    INTERRUPTED = "interrupted"  # cut off by SIGINT, SIGTERM or the run timeout

    @classmethod
    def parse(cls, value: str) -> Outcome:
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"unknown outcome {value!r}; known: {', '.join(o.value for o in cls)}") from None


# Which engine ran an attempt (native, upstream; both for a cross-check row). Rows without it are native.
ENGINE_PROPERTY = "engine"

# Testcase-level properties TestGrid reads (and the dashboard filters on).
OPS_CASE_PROPERTY = "ops-readiness-case"  # the windows-operational-readiness test case(s) that selected the row
PROPERTY_KEYS = (ENGINE_PROPERTY, OPS_CASE_PROPERTY, "attempt", "tags", "tier", "category", "plan-items",
                 "diagnostics", "excluded", "interrupted", "timed-out")


@dataclasses.dataclass
class Attempt:
    name: str  # the full upstream-style name
    nodeid: str
    outcome: Outcome
    attempt: int = 1
    duration: float = 0.0
    message: str = ""  # short: the first line of the failure, or the skip reason
    details: str = ""  # the long failure text
    properties: dict[str, str] = dataclasses.field(default_factory=dict)

    def to_json(self) -> str:
        data = dataclasses.asdict(self)
        data["outcome"] = self.outcome.value
        return json.dumps(data)

    @staticmethod
    def from_dict(raw: dict[str, Any]) -> Attempt:
        raw = dict(raw)
        raw["outcome"] = Outcome.parse(raw["outcome"])
        return Attempt(**raw)
