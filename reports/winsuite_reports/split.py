"""Two parts of a big report's work at once: on a machine with a second CPU, a forked copy of the process does one
part while the process does the other (a big tab's grid page takes as long as all its other pages; a long
history's fingerprints, stat calls mostly, take as long as parsing its new build).

The copy is made only where that is safe and worth it: `os.fork` exists, the process runs no other thread (a fork
copies no thread, and a lock one held would stay held in the copy), and a second CPU is there to run it. Whatever
goes wrong in the copy, the process does that part itself afterwards: its error, if any, shows as without a copy.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable


def available_cpus() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def can_fork() -> bool:
    """Whether a forked copy of this process could write a part beside it (see the module's text)."""
    return hasattr(os, "fork") and threading.active_count() == 1 and available_cpus() > 1


def both(first: Callable[[], None], second: Callable[[], None], *, split: bool) -> None:
    """Run `first` and `second`: with `split` (and can_fork()), `first` in a forked copy of the process while this
    one runs `second`; else one after the other. Returns when both are done."""
    if not (split and can_fork()):
        first()
        second()
        return

    def run_first() -> bytes:
        first()
        return b""

    with Beside(run_first, split=True) as copy:  # `second` failing or interrupted: the copy is stopped
        second()
        copy.result()  # the copy failed or was killed: `first` runs here, where an error is seen


class Beside:
    """`compute`'s bytes, computed (with `split` and can_fork()) by a forked copy of the process while the process
    does something else, else by the process when asked for; where the copy fails, the process computes them then.
    A context: left before result() was asked for (the caller failed meanwhile), the copy is stopped."""

    def __init__(self, compute: Callable[[], bytes], *, split: bool) -> None:
        self._compute = compute
        self._child = 0  # the copy's pid while it has not been waited for
        self._reader = -1
        if not (split and can_fork()):
            return
        reader, writer = os.pipe()
        child = os.fork()
        if child == 0:  # the copy: hands the bytes over and ends, running nothing of the process's own clean-up
            code = 1
            try:
                os.close(reader)
                with os.fdopen(writer, "wb") as out:
                    out.write(compute())
                code = 0
            finally:
                os._exit(code)
        os.close(writer)
        self._child, self._reader = child, reader

    def __enter__(self) -> Beside:
        return self

    def __exit__(self, *_: object) -> None:
        if self._child:
            os.kill(self._child, signal.SIGKILL)
            self._waited()

    def result(self) -> bytes:
        if not self._child:
            return self._compute()
        try:
            with os.fdopen(self._reader, "rb", closefd=False) as found:
                data = found.read()  # before waiting: a copy with more than a pipe holds waits for it to be read
        finally:
            code = self._waited()
        return data if code == 0 else self._compute()

    def _waited(self) -> int:
        child, self._child = self._child, 0
        os.close(self._reader)
        _, status = os.waitpid(child, 0)
        return os.waitstatus_to_exitcode(status)
