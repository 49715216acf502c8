"""Per-test timeouts: setup and call share one deadline; a timed-out test fails and says so."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from collections.abc import Generator
from types import FrameType

import pytest

from winsuite.authoring.naming import spec_of

TIMED_OUT_PROPERTY = "winsuite.timed-out"
DEADLINE_KEY = pytest.StashKey[float]()


class TestTimedOut(Exception):
    """Raised inside the test when its time is up."""

    __test__ = False  # not a test class, whatever pytest's name-based collection thinks


class TestTimeouts:
    """SIGALRM-based: tests run in each process's main thread, so the alarm interrupts waits and I/O."""

    __test__ = False

    def __init__(self, seconds: Callable[[], float]) -> None:
        self._seconds = seconds  # read lazily: the job is resolved only when winsuite tests run

    @property
    def seconds(self) -> float:
        return self._seconds()

    def _arm(self, item: pytest.Item) -> None:
        deadline = item.stash.setdefault(DEADLINE_KEY, time.monotonic() + self.seconds)
        remaining = max(0.001, deadline - time.monotonic())

        def expire(signum: int, frame: FrameType | None) -> None:
            raise TestTimedOut(f"timed out after {self.seconds:.0f}s (per-test timeout)")

        signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, remaining)

    @staticmethod
    def _disarm() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)

    def _within_deadline(self, item: pytest.Item) -> Generator[None, None, None]:
        """Setup and call run under one deadline (pytest calls the two hooks separately)."""
        if spec_of(item) is None:
            yield
            return
        self._arm(item)
        try:
            yield
        finally:
            self._disarm()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._within_deadline(item)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._within_deadline(item)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.excinfo is not None and call.excinfo.errisinstance(TestTimedOut):
            report.user_properties = [*report.user_properties, (TIMED_OUT_PROPERTY, "true")]
        if call.when == "teardown" and DEADLINE_KEY in item.stash:
            del item.stash[DEADLINE_KEY]  # the next attempt gets a fresh budget
        return report
