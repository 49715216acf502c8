"""The live progress line: done/total, outcomes, elapsed and ETA on a terminal; plain lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from winsuite.results.model import Attempt
from winsuite.results.model import Outcome


def clock(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s"


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = stream or sys.stdout
        self.tty = self.stream.isatty()
        self.started = time.monotonic()
        self.counts = {"passed": 0, "failed": 0, "skipped": 0, "flaky": 0, "interrupted": 0}
        self.done = 0
        self.phase = ""

    def set_phase(self, phase: str) -> None:
        self.phase = phase
        self._print_line(f"{phase}")

    def record(self, attempt: Attempt, final: bool, earlier_failed: bool) -> None:
        if not final:
            self._print_line(f"RETRY {attempt.name} (attempt {attempt.attempt} failed: {attempt.message})")
            return
        self.done += 1
        outcome = attempt.outcome
        key = "flaky" if outcome is Outcome.PASSED and earlier_failed else outcome.value
        self.counts[key] = self.counts.get(key, 0) + 1
        label = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP", "flaky": "FLAKY",
                 "interrupted": "INTERRUPTED"}[key]
        if not self.tty:
            detail = f" ({attempt.message})" if attempt.message and key != "passed" else ""
            self._print_line(f"[{self.done}/{self.total}] {label} {attempt.name} ({attempt.duration:.1f}s){detail}")
        elif key in ("failed", "interrupted"):
            self._print_line(f"{label} {attempt.name}: {attempt.message}")
        self.refresh()

    def status(self) -> str:
        elapsed = time.monotonic() - self.started
        eta = ""
        if 0 < self.done < self.total:
            eta = f", ETA {clock(elapsed / self.done * (self.total - self.done))}"
        c = self.counts
        return (f"{self.done}/{self.total} done: {c['passed']} passed, {c['failed']} failed, "
                f"{c['flaky']} flaky, {c['skipped']} skipped | {clock(elapsed)} elapsed{eta}")

    def refresh(self) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K" + self.status())
            self.stream.flush()

    def _print_line(self, text: str) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(self.status() + "\n")
        self.stream.flush()
