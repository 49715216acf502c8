"""The supervisor against a fake phase, as pytest-xdist tests its scheduler with a fake node: rows handed on in order,
signals and the run timeout interrupt a phase, and one that does not stop is killed."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from collections.abc import Iterator

import pytest

from winsuite.errors import ExitCode
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.run.engines.base import PhaseSpec
from winsuite.run.engines.base import RunningPhase
from winsuite.run.supervisor import Supervisor
from winsuite_reports.conventions import RowProperties

Batch = list[tuple[Attempt, bool]]


class FakePhase:
    """A RunningPhase that reports one scripted batch of attempts per poll and ends when none is left, with `code`;
    interrupted, it stops with pytest's exit code 2 unless it `ignores_interrupts`; killed, it ends at once."""

    def __init__(self, batches: list[Batch], *, code: int = 0, hangs: bool = False,
                 ignores_interrupts: bool = False) -> None:
        self.spec = PhaseSpec(2, "serial", 1)
        self.batches = list(batches)
        self.code = code
        self.hangs = hangs  # runs until stopped
        self.ignores_interrupts = ignores_interrupts
        self.interrupted_with: str | None = None
        self.asked: list[str] = []

    def wait(self, timeout: float) -> int | None:
        if "kill" in self.asked:
            return -signal.SIGKILL
        if self.interrupted_with is not None and not self.ignores_interrupts:
            return 2
        return None if self.batches or self.hangs else self.code

    def interrupt(self, reason: str) -> None:
        self.asked.append(f"interrupt: {reason}")
        self.interrupted_with = reason

    def kill(self) -> None:
        self.asked.append("kill")

    def new_attempts(self) -> Iterator[tuple[Attempt, bool]]:
        if self.batches:
            yield from self.batches.pop(0)


def attempt(name: str, outcome: Outcome, number: int = 1, engine: str = "native") -> Attempt:
    return Attempt(name, "", outcome, attempt=number, properties=RowProperties(engine=engine))


def follow(supervisor: Supervisor, phase: RunningPhase, *, earlier: list[Attempt] | None = None,
           on_tick: Callable[[], None] = lambda: None) -> list[tuple[int, str, int, bool, bool]]:
    rows: list[tuple[int, str, int, bool, bool]] = []
    supervisor.follow(phase, lambda number, row, final, failed_before: rows.append(
        (number, row.name, row.attempt, final, failed_before)), earlier or [], on_tick)
    return rows


def supervisor(said: list[str], **kwargs: float) -> Supervisor:
    return Supervisor(kwargs.get("started", time.time()), kwargs.get("run_timeout", 3600), said.append,
                      kwargs.get("grace", 45.0))


def test_rows_are_handed_on_in_order_with_final_and_whether_an_earlier_attempt_failed() -> None:
    phase = FakePhase([
        [(attempt("a", Outcome.FAILED), False)],
        [(attempt("a", Outcome.PASSED, 2), True), (attempt("b", Outcome.PASSED), True)],
        [],  # a poll with nothing new
        [(attempt("c", Outcome.PASSED, engine="upstream"), True), (attempt("d", Outcome.PASSED, 2), True)],
    ])
    earlier = [attempt("c", Outcome.FAILED), attempt("d", Outcome.FAILED)]  # judged before, by engine
    said: list[str] = []
    rows = follow(supervisor(said), phase, earlier=earlier)
    assert rows == [(2, "a", 1, False, False), (2, "a", 2, True, True), (2, "b", 1, True, False),
                    (2, "c", 1, True, False), (2, "d", 2, True, True)]
    assert phase.asked == [] and said == []


def test_a_signal_interrupts_the_phase_which_writes_its_results_and_stops() -> None:
    said: list[str] = []
    watcher = supervisor(said)
    phase = FakePhase([[(attempt("a", Outcome.PASSED), True)]], hangs=True)
    rows = follow(watcher, phase, on_tick=lambda: watcher._on_signal(signal.SIGINT, None))
    assert phase.asked == ["interrupt: SIGINT received"] and rows == [(2, "a", 1, True, False)]
    assert said == ["\nwinsuite: SIGINT received; stopping the run and writing its results"]
    assert watcher.exit_code is ExitCode.INTERRUPTED and not watcher.stop_now


def test_a_phase_that_does_not_stop_within_its_grace_is_killed() -> None:
    said: list[str] = []
    watcher = supervisor(said, grace=0.2)
    phase = FakePhase([], hangs=True, ignores_interrupts=True)
    began = time.monotonic()
    follow(watcher, phase, on_tick=lambda: watcher._on_signal(signal.SIGTERM, None) if not phase.asked else None)
    assert time.monotonic() - began >= 0.2
    assert phase.asked == ["interrupt: SIGTERM received", "kill"]
    assert said[-1] == "winsuite: the phase did not stop in time; killing it"
    assert watcher.exit_code is ExitCode.INTERRUPTED


def test_a_second_signal_kills_the_phase_at_once() -> None:
    said: list[str] = []
    watcher = supervisor(said, grace=600)
    phase = FakePhase([], hangs=True, ignores_interrupts=True)
    follow(watcher, phase, on_tick=lambda: watcher._on_signal(signal.SIGINT, None))
    assert phase.asked == ["interrupt: SIGINT received", "kill"] and watcher.stop_now
    assert watcher.abort_reason == "SIGINT received"  # the first signal's reason stands


def test_the_run_timeout_interrupts_the_phase_and_exits_as_timed_out() -> None:
    said: list[str] = []
    watcher = supervisor(said, started=time.time() - 10, run_timeout=5)
    phase = FakePhase([], hangs=True)
    follow(watcher, phase)
    assert phase.asked == ["interrupt: run timeout of 5s reached"]
    assert watcher.timed_out and watcher.exit_code is ExitCode.TIMED_OUT


def test_a_phase_that_ends_by_itself_leaves_no_abort_and_no_exit_code_of_the_supervisor() -> None:
    watcher = supervisor([])
    follow(watcher, FakePhase([[(attempt("a", Outcome.FAILED), True)]], code=1))
    assert watcher.abort_reason == "" and watcher.exit_code is None


def test_a_signal_is_held_until_the_step_is_interruptible_then_stops_it() -> None:
    watcher = supervisor([])
    watcher._on_signal(signal.SIGTERM, None)  # while files are written: held
    assert watcher.abort_reason == "SIGTERM received"
    with pytest.raises(KeyboardInterrupt, match="SIGTERM received"):
        watcher.set_interruptible(True)
    fresh = supervisor([])
    fresh.set_interruptible(True)
    with pytest.raises(KeyboardInterrupt, match="SIGINT received"):  # while connecting: at once
        fresh._on_signal(signal.SIGINT, None)


def test_the_handlers_are_the_supervisors_while_it_runs_and_restored_after() -> None:
    before = signal.getsignal(signal.SIGTERM)
    watcher = supervisor([])
    with watcher:
        assert signal.getsignal(signal.SIGTERM) == watcher._on_signal
        assert signal.getsignal(signal.SIGINT) == watcher._on_signal
    assert signal.getsignal(signal.SIGTERM) == before
