"""Where a run's time goes: named spans appended as JSON lines to the file that WINSUITE_TIMELINE names.

Every process of a run (the `winsuite` controller, its pytest phases and their xdist workers) appends to the same
file; bench/profile_run.py sets the variable and prints the table. Unset (always, outside the bench), nothing is
recorded and a span costs one dictionary lookup.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator

ENV = "WINSUITE_TIMELINE"


def enabled() -> bool:
    return bool(os.environ.get(ENV))


def record(name: str, start: float, end: float, **fields: str) -> None:
    """One span of wall-clock time (epoch seconds), with the process that spent it."""
    path = os.environ.get(ENV)
    if not path:
        return
    line = json.dumps({"span": name, "start": start, "end": end, "pid": os.getpid(), **fields})
    # One short write in append mode: lines of concurrent processes do not interleave.
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")


@contextlib.contextmanager
def span(name: str, **fields: str) -> Iterator[None]:
    """Record the time the block takes, also when it raises."""
    if not enabled():
        yield
        return
    start = time.time()
    try:
        yield
    finally:
        record(name, start, time.time(), **fields)


def process_started() -> float:
    """When this process started (epoch seconds, to the kernel's clock tick), so start-up and imports are seen."""
    try:
        with open("/proc/self/stat", encoding="ascii") as handle:
            ticks = int(handle.read().rsplit(")", 1)[1].split()[19])  # starttime: clock ticks after boot
    except (OSError, ValueError, IndexError):
        return time.time()
    age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    return time.time() - age


def since_process_start(name: str, **fields: str) -> None:
    """Record the span from this process's start until now (its interpreter start-up and imports)."""
    if enabled():
        record(name, process_started(), time.time(), **fields)
