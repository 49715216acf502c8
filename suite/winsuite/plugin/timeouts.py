"""Per-test timeouts: setup and call share one deadline; a timed-out test fails and says where it was.

As ginkgo's progress report does for a spec that is stuck, the failure's first line names the step the test was in
(`winsuite.authoring.steps`) and the innermost line of the test's own code (its file, or the case catalog), and the
lines after it hold the test's stack, innermost last: the row's message and details are the exception's text.
"""

from __future__ import annotations

import dataclasses
import linecache
import os
import signal
import sys
import time
from collections.abc import Callable
from collections.abc import Generator
from types import FrameType

import pytest

from winsuite.authoring import steps
from winsuite.authoring.naming import spec_of
from winsuite.authoring.steps import Step
from winsuite.paths import PACKAGE_DIR

TIMED_OUT_PROPERTY = "winsuite.timed-out"
DEADLINE_KEY = pytest.StashKey[float]()
CASES_DIR = PACKAGE_DIR / "cases"
STACK_LIMIT = 40  # frames shown; a deeper stack keeps its outermost and innermost halves


class TestTimedOut(BaseException):
    """Raised inside the test when its time is up.

    Not an Exception: the client libraries a test calls catch Exception around their I/O (the kubernetes client turns
    any of it into an ApiException, which waits retry), and the alarm fires once.
    """

    __test__ = False  # not a test class, whatever pytest's name-based collection thinks


@dataclasses.dataclass(frozen=True)
class Frame:
    """One frame of a stuck test's stack, as the report shows it."""

    path: str
    line: int
    function: str
    own: bool = False  # the test's own code
    source: str = ""  # its line of code, for the test's own frames

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"


def shown_path(path: str, roots: list[str]) -> str:
    """A file as its import reads (`winsuite/cases/adapted/test_services.py`): relative to the longest import root
    that holds it; as it is otherwise."""
    holding = [root for root in roots if path.startswith(root.rstrip(os.sep) + os.sep)]
    return os.path.relpath(path, max(holding, key=len)) if holding else path


def stack_of(frame: FrameType | None, own: Callable[[str], bool]) -> list[Frame]:
    """The frames from the outermost one of the test's own code down to `frame`, outermost first (when none is the
    test's, the innermost STACK_LIMIT frames)."""
    raw: list[FrameType] = []
    while frame is not None:
        raw.append(frame)
        frame = frame.f_back
    raw.reverse()
    first = next((i for i, f in enumerate(raw) if own(f.f_code.co_filename)), max(0, len(raw) - STACK_LIMIT))
    roots = [os.path.abspath(p) for p in sys.path if p]
    frames = []
    for f in raw[first:]:
        path, mine = f.f_code.co_filename, own(f.f_code.co_filename)
        source = linecache.getline(path, f.f_lineno).strip() if mine else ""
        frames.append(Frame(shown_path(path, roots), f.f_lineno, f.f_code.co_name, mine, source))
    return frames


def timeout_message(seconds: float, step: Step | None, stack: list[Frame]) -> str:
    """`timed out after Ns (per-test timeout) in step "…" at <file>:<line> in <function>`, then the step's runtime
    and the stack (`>` marks the test's own frames), as ginkgo's progress report shows a stuck spec."""
    where = next((f for f in reversed(stack) if f.own), None)
    head = f"timed out after {seconds:.0f}s (per-test timeout)"
    head += f' in step "{step.text}"' if step else ""
    head += f" at {where.location} in {where.function}" if where else ""
    lines = [head]
    if step:
        lines.append(f"At [By Step] {step.text} (Step Runtime: {step.runtime:.0f}s)")
    lines.append("Test stack, innermost last (> the test's own code):")
    kept = stack if len(stack) <= STACK_LIMIT else [*stack[:STACK_LIMIT // 2], None, *stack[-STACK_LIMIT // 2:]]
    for frame in kept:
        if frame is None:
            lines.append(f"  … {len(stack) - STACK_LIMIT} more frames")
            continue
        lines.append(f"{'>' if frame.own else ' '} {frame.location} in {frame.function}")
        if frame.source:
            lines.append(f"      {frame.source}")
    return "\n".join(lines)


def own_code(item: pytest.Item) -> Callable[[str], bool]:
    """Whether a frame's file is the test's own code: the test's file, or a module of the case catalog."""
    test_file, cases = os.path.realpath(item.path), str(CASES_DIR) + os.sep

    def own(path: str) -> bool:
        real = os.path.realpath(path)
        return real == test_file or real.startswith(cases)

    return own


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
        own = own_code(item)

        def expire(signum: int, frame: FrameType | None) -> None:
            raise TestTimedOut(timeout_message(self.seconds, steps.current(), stack_of(frame, own)))

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
        steps.clear()  # a test starts outside any step, whatever the one before it was in
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

