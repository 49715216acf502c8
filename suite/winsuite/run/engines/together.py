"""Both engines' parts of a phase running at the same time, followed by the runner as one phase."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator

from winsuite.results.model import Attempt
from winsuite.run.engines.base import PhaseSpec
from winsuite.run.engines.base import RunningPhase


def split_workers(parallelism: int, native: int, upstream: int) -> tuple[int, int]:
    """The run's parallelism shared by pytest workers and ginkgo processes in proportion to their tests, each
    engine at least one and never more than it has tests; (native, upstream). Only for parallelism >= 2."""
    assert parallelism >= 2 and native > 0 and upstream > 0
    share = round(parallelism * native / (native + upstream))
    native_workers = min(native, max(1, min(parallelism - 1, share)))
    return native_workers, min(upstream, parallelism - native_workers)


class Together:
    """Several RunningPhase started together; done when all are, stopped all at once."""

    def __init__(self, spec: PhaseSpec, parts: list[RunningPhase]) -> None:
        self.spec = spec
        self.parts = parts
        self.codes: dict[int, int] = {}

    @property
    def interrupted_with(self) -> str | None:
        return next((p.interrupted_with for p in self.parts if p.interrupted_with), None)

    def wait(self, timeout: float) -> int | None:
        """The worst exit code once every part is done, else None after about `timeout` seconds."""
        deadline = time.monotonic() + timeout
        for index, part in enumerate(self.parts):
            if index not in self.codes:
                code = part.wait(timeout=max(0.0, deadline - time.monotonic()))
                if code is not None:
                    self.codes[index] = code
        if len(self.codes) < len(self.parts):
            return None
        return max(self.codes.values(), key=abs)

    def interrupt(self, reason: str) -> None:
        for part in self.parts:
            part.interrupt(reason)

    def kill(self) -> None:
        for part in self.parts:
            part.kill()

    def new_attempts(self) -> Iterator[tuple[Attempt, bool]]:
        return itertools.chain.from_iterable(part.new_attempts() for part in self.parts)
