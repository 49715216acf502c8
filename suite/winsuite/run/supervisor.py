"""A run's one abort reason: SIGINT/SIGTERM and the run timeout, for local runs and runs inside the cluster alike.

A signal is never lost, only held while files are being written: every interrupted run ends with its results,
marked ABORTED. A second signal asks to stop at once (kill the phase, stop waiting for shards).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from types import FrameType
from types import TracebackType

from winsuite.errors import ExitCode
from winsuite.results.merge import engine_of
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.run.engines.base import RunningPhase
from winsuite.run.engines.native import INTERRUPT_GRACE_SECONDS

# (phase number, attempt, whether it is its test's last attempt, whether an earlier attempt of it failed)
RowSink = Callable[[int, Attempt, bool, bool], None]


class Supervisor:
    def __init__(self, started: float, run_timeout: float, say: Callable[[str], None],
                 grace: float = INTERRUPT_GRACE_SECONDS) -> None:
        self.started = started
        self.run_timeout = run_timeout
        self.say = say
        self.grace = grace  # how long an interrupted phase may take to write its results before it is killed
        self.abort_reason = ""
        self.timed_out = False
        self.stop_now = False  # a second signal
        self.interruptible = False  # whether a signal stops the current step at once
        self._previous: dict[int, object] = {}

    def __enter__(self) -> Supervisor:
        self._previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]  # what signal.signal returned before

    @property
    def deadline(self) -> float:
        return self.started + self.run_timeout

    @property
    def exit_code(self) -> ExitCode | None:
        """The exit code an aborted run ends with (None when nothing aborted it)."""
        if not self.abort_reason:
            return None
        return ExitCode.TIMED_OUT if self.timed_out else ExitCode.INTERRUPTED

    def set_interruptible(self, enabled: bool) -> None:
        """Whether a signal interrupts the current step (connecting, planning, building); a signal held meanwhile
        takes effect on enabling."""
        self.interruptible = enabled
        if enabled and self.abort_reason:
            raise KeyboardInterrupt(self.abort_reason)

    def check_deadline(self) -> None:
        if not self.abort_reason and time.time() > self.deadline:
            self.timed_out = True
            self.abort_reason = f"run timeout of {self.run_timeout:.0f}s reached"

    def follow(self, phase: RunningPhase, rows: RowSink, earlier: list[Attempt], tick: Callable[[], None]) -> None:
        """Follow a running phase until it ends, each row to `rows` (`tick` between polls); stop it on a signal or
        the run timeout (and kill it when it does not stop within its grace, or on a second signal)."""
        failed_before = {(a.name, engine_of(a)) for a in earlier if a.outcome is Outcome.FAILED}
        interrupted_at: float | None = None
        while True:
            code = phase.wait(timeout=0.5)
            for attempt, final in phase.new_attempts():
                key = (attempt.name, engine_of(attempt))
                rows(phase.spec.number, attempt, final, key in failed_before)
                if attempt.outcome is Outcome.FAILED:
                    failed_before.add(key)
            if code is not None:
                return
            tick()
            self.check_deadline()
            if self.abort_reason and interrupted_at is None:
                self.say(f"\nwinsuite: {self.abort_reason}; stopping the run and writing its results")
                phase.interrupt(self.abort_reason)
                interrupted_at = time.monotonic()
            if interrupted_at is not None and (
                self.stop_now or time.monotonic() - interrupted_at > self.grace
            ):
                self.say("winsuite: the phase did not stop in time; killing it")
                phase.kill()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.abort_reason:
            self.stop_now = True
        self.abort_reason = self.abort_reason or f"{signal.Signals(signum).name} received"
        if self.interruptible:  # connecting, discovering, building: stop that at once
            raise KeyboardInterrupt(self.abort_reason)
