"""One phase of a run: a pytest subprocess in its own process group, its event log tailed, interruptible."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from winsuite.results.events import INTERRUPT_REASON_FILE
from winsuite.results.events import Event
from winsuite.results.events import EventKind
from winsuite.results.events import events_name
from winsuite.results.model import Attempt
from winsuite.run.engines.base import PhaseSpec
from winsuite.run.engines.tether import tethered

# How long a phase may take to write its results after being interrupted, before it is killed.
INTERRUPT_GRACE_SECONDS = 45.0


class EventTail:
    """Reads the complete lines appended to an event log since the last call."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.partial = b""

    def new_events(self) -> Iterator[Event]:
        if not self.path.exists():
            return
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            chunk = handle.read()
        self.offset += len(chunk)
        data = self.partial + chunk
        lines = data.split(b"\n")
        self.partial = lines.pop()
        for line in lines:
            event = Event.from_line(line) if line.strip() else None
            if event is not None:
                yield event


class PhaseProcess:
    def __init__(self, spec: PhaseSpec, argv: list[str], results_dir: Path, log: TextIO) -> None:
        self.spec = spec
        self.argv = argv
        self.results_dir = results_dir
        self.log = log
        self.events = EventTail(results_dir / events_name(spec.junit_name))
        self.process: subprocess.Popen[bytes] | None = None
        self.interrupted_with: str | None = None

    def start(self) -> None:
        self.log.write(f"$ {' '.join(self.argv)}\n")
        self.log.flush()
        # Its own session: a Ctrl-C on the terminal reaches the runner, which decides what the phase gets; tethered:
        # the session ends with the runner, even a killed one.
        self.process = subprocess.Popen(tethered(self.argv), stdout=self.log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True, env=dict(os.environ))

    def wait(self, timeout: float) -> int | None:
        assert self.process is not None
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def interrupt(self, reason: str) -> None:
        """SIGINT the phase's process group (pytest then writes its results, marked interrupted)."""
        if self.process is None or self.process.poll() is not None or self.interrupted_with is not None:
            return
        self.interrupted_with = reason
        (self.results_dir / INTERRUPT_REASON_FILE).write_text(reason + "\n")
        self._signal(signal.SIGINT)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def new_attempts(self) -> Iterator[tuple[Attempt, bool]]:
        """Attempts the phase recorded since the last call, and whether each was its test's last."""
        for event in self.events.new_events():
            if event.kind is EventKind.ATTEMPT:
                yield event.attempt, event.final

    def _signal(self, signum: int) -> None:
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):  # the phase already ended
            os.killpg(self.process.pid, signum)


def pytest_argv(spec: PhaseSpec, *, run_file: Path, cases: str, extra: tuple[str, ...]) -> list[str]:
    """The phase's pytest: the run it belongs to (the resolved document), and which of its phases this is."""
    argv = [
        sys.executable, "-m", "winsuite.run.engines.pytest_process", "--pyargs", cases,
        # hypothesis (a dev extra of winsuite) would import itself for its report header alone: 0.2 s a process.
        "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-o", "addopts=", "-v", "--tb=short", "--color=no",
        "-rfEs", "--run-file", str(run_file), "--phase", spec.name,
    ]
    if spec.workers > 1:
        argv += ["-n", str(spec.workers)]
    return argv + list(extra)
