"""Two parts of a big report's writing at once: on a machine with a second CPU, a forked copy of the process writes
one part while the process writes the other (a big tab's grid page takes as long as all its other pages).

The copy is made only where that is safe and worth it: `os.fork` exists, the process runs no other thread (a fork
copies no thread, and a lock one held would stay held in the copy), and a second CPU is there to run it. Whatever
goes wrong in the copy, the process writes that part itself afterwards: its error, if any, shows as without a copy.
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
    child = os.fork()
    if child == 0:  # the copy: runs `first` and ends, running nothing of the process's own clean-up
        code = 1
        try:
            first()
            code = 0
        finally:
            os._exit(code)
    try:
        second()
        _, status = os.waitpid(child, 0)
    except BaseException:  # interrupted, or `second` failed: the copy does not outlive the process's own work
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        raise
    if os.waitstatus_to_exitcode(status) != 0:
        first()  # the copy failed or was killed: written here, where an error is seen
