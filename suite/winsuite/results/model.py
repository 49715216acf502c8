"""One attempt of one test: the unit every results file is made of."""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

from winsuite.inputs import document_codec
from winsuite_reports.conventions import RowProperties


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


@dataclasses.dataclass
class Attempt:
    name: str  # the full upstream-style name
    nodeid: str
    outcome: Outcome
    attempt: int = 1
    duration: float = 0.0
    message: str = ""  # short: the first line of the failure, or the skip reason
    details: str = ""  # the long failure text
    properties: RowProperties = dataclasses.field(default_factory=RowProperties)
    # The evidence a verdict is judged by: where the attempt ran and when, and which part of it failed.
    namespaces: tuple[str, ...] = ()  # where its pods were made
    started: float = 0.0  # seconds since the epoch
    failed_during: str = ""  # setup, call or teardown (pytest); BeforeSuite (ginkgo)

    def to_json(self) -> str:
        return json.dumps(document_codec.encode(self))

    @staticmethod
    def from_dict(raw: dict[str, Any]) -> Attempt:
        """Raises ValueError (a DocumentError naming the field) for anything an attempt is not."""
        attempt: Attempt = document_codec.decode(Attempt, raw)
        return attempt
