"""A test's steps, as the e2e framework's `ginkgo.By`: each is logged, and the one a test is in is what a timeout names.

    step("creating service endpoint-test2")          # By(text): the test is in this step until its next one
    with step("checking the service is reachable"):  # By(text, func): the step ends with the block
        prober.check_service_reachability(svc)

Tests run one at a time in each process's main thread (where the per-test timeout's alarm fires), so the step is
the process's: the plugin clears it when a test starts.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from types import TracebackType

log = logging.getLogger("winsuite.cases")


@dataclasses.dataclass(frozen=True)
class Step:
    text: str
    started: float = dataclasses.field(default_factory=time.monotonic)

    @property
    def runtime(self) -> float:
        """Seconds since the step began."""
        return time.monotonic() - self.started


@dataclasses.dataclass
class _Current:
    step: Step | None = None


_CURRENT = _Current()


class StepBlock:
    """What `step()` returns: used as a context manager, the step ends with the block and the one before resumes."""

    def __init__(self, previous: Step | None) -> None:
        self._previous = previous

    def __enter__(self) -> StepBlock:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if kind is None:  # a block that failed stays where it failed, for whoever reports it
            _CURRENT.step = self._previous


def step(text: str) -> StepBlock:
    """ginkgo.By: log `STEP: text` and make it where the test is."""
    log.info("STEP: %s", text)
    previous, _CURRENT.step = _CURRENT.step, Step(text)
    return StepBlock(previous)


def current() -> Step | None:
    """The step the running test is in (None before its first)."""
    return _CURRENT.step


def clear() -> None:
    """A new test starts outside any step."""
    _CURRENT.step = None
