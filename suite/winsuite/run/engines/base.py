"""What every engine's phase offers the runner: its place in the run, progress, interruption."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Protocol

from winsuite.results.model import Attempt
from winsuite_reports.conventions import junit_name


@dataclasses.dataclass(frozen=True)
class PhaseSpec:
    number: int
    name: str  # "parallel" or "serial"
    workers: int

    @property
    def junit_name(self) -> str:
        return junit_name(self.number)


class RunningPhase(Protocol):
    """One engine's part of a phase, running in processes of its own."""

    spec: PhaseSpec

    @property
    def interrupted_with(self) -> str | None:
        """Why it was asked to stop, once it was."""

    def wait(self, timeout: float) -> int | None:
        """The exit code once done, else None after `timeout` seconds."""

    def interrupt(self, reason: str) -> None:
        """Ask it to stop and write its results (SIGINT)."""

    def kill(self) -> None:
        """Stop it at once."""

    def new_attempts(self) -> Iterator[tuple[Attempt, bool]]:
        """Attempts finished since the last call, and whether each was its test's last."""
