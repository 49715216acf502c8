"""A phase's processes end with the run that started them, however the run ends (SIGKILL included).

`winsuite run` starts each phase (pytest and its xdist workers; ginkgo and its e2e.test processes) in a process group
of its own. A runner that is killed stops nothing itself, and the phase would go on testing the cluster for as long as
its tests take, making namespaces no run deletes. So a phase's command starts through this module (`python -m`): it
forks a watcher into the group, then becomes the command (exec: same pid, same group). The watcher waits on a pidfd
of the runner; once the runner is gone it kills the whole group: the command and every process it started there. A
parent-death signal (PR_SET_PDEATHSIG) on the command alone would not do: xdist workers and e2e.test processes are
the runner's grandchildren, and ginkgo is not ours to change. The watcher itself holds such a signal, tied to the
command: a phase that ends leaves no watcher behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

WATCHER_NAME = "winsuite-tether"  # the watcher's /proc/<pid>/comm (15 bytes at most): not one of the phase's own
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PR_SET_NAME = 15
RUNNER_GONE_EXIT = 128 + signal.SIGKILL  # as the group would end: the runner is not there to read it


def tethered(argv: Sequence[str]) -> list[str]:
    """`argv`, started so that it and its group end when this process does."""
    return [sys.executable, "-m", __name__, str(os.getpid()), "--", *argv]


def _main(runner: int, command: list[str]) -> NoReturn:
    # An interrupt before the exec ends this process quietly (no traceback of an interpreter that is not pytest);
    # the dispositions the command starts with are then the defaults, as without the tether.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        watched = os.pidfd_open(runner)
    except ProcessLookupError:
        os._exit(RUNNER_GONE_EXIT)
    except OSError as err:  # a kernel before 5.3, or a seccomp profile that refuses pidfd_open: run, untethered
        os.write(2, f"winsuite: warning: this phase cannot watch its run ({err}); it ends with the run only when the "
                    "run stops it\n".encode())
        os.execvp(command[0], command)
    # Opened first, checked second: while the runner is still this process's parent, the pidfd is the runner's.
    if os.getppid() != runner:
        os._exit(RUNNER_GONE_EXIT)
    command_pid = os.getpid()
    if os.fork() == 0:
        _watch(watched, command_pid)
        os._exit(0)  # the watcher never runs the command
    os.close(watched)
    os.execvp(command[0], command)


def _watch(runner: int, command_pid: int) -> None:
    """The watcher: outlives the signals a phase is stopped with (SIGINT or SIGTERM to the group: the phase writes its
    results then, and ginkgo passes them on to its group), dies with the command, and kills the group once the runner
    is gone."""
    for stopping in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stopping, signal.SIG_IGN)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_NAME, WATCHER_NAME.encode(), 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != command_pid:  # the command ended before the signal was set
        return
    select.select([runner], [], [])  # readable once the runner has exited
    with contextlib.suppress(OSError):  # the phase's output may be a pipe to the runner, gone with it
        os.write(2, b"winsuite: the run's process is gone; stopping this phase and every process it started\n")
    os.killpg(0, signal.SIGKILL)  # the watcher with them


if __name__ == "__main__":
    _main(int(sys.argv[1]), sys.argv[3:])
