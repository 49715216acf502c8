"""A tethered phase (run/engines/tether.py), with real processes: its whole group ends when the process that started
it is killed, grandchildren included; it outlives an interrupt; and alone it is the command (pid, exit code), with no
watcher left once it ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.tools.proc_table import in_group
from tests.tools.proc_table import wait_until
from winsuite.run.engines.tether import WATCHER_NAME
from winsuite.run.engines.tether import tethered

# Outlives SIGINT and SIGTERM (as pytest does while it writes its results) and starts two grandchildren of the runner.
PHASE = ["sh", "-c", "trap '' INT TERM; sleep 300 & sleep 300 & wait"]
# A runner: starts the tethered phase in a session of its own (as the engines do), says its pid, waits.
RUNNER = ("import subprocess, sys\n"
          "from winsuite.run.engines.tether import tethered\n"
          f"phase = subprocess.Popen(tethered({PHASE!r}), start_new_session=True)\n"
          "print(phase.pid, flush=True)\n"
          "phase.wait()\n")


def names(group: int) -> list[str]:
    return sorted(seen.name for seen in in_group(group).values())


@pytest.fixture
def runner() -> Iterator[tuple[subprocess.Popen[str], int]]:
    process = subprocess.Popen([sys.executable, "-c", RUNNER], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    pgid = int(process.stdout.readline())
    try:
        yield process, pgid
    finally:
        process.kill()
        process.wait()
        if in_group(pgid):  # the test failed: nothing of it may outlive the session
            os.killpg(pgid, signal.SIGKILL)


def test_a_killed_runner_takes_its_phase_and_the_phases_children_along(
        runner: tuple[subprocess.Popen[str], int]) -> None:
    process, pgid = runner
    assert wait_until(lambda: names(pgid) == sorted(["sh", "sleep", "sleep", WATCHER_NAME]), 10), names(pgid)
    for stopping in (signal.SIGINT, signal.SIGTERM):  # the phase is stopped: the watcher stays for the phase's end
        os.killpg(pgid, stopping)
    time.sleep(0.3)
    assert names(pgid) == sorted(["sh", "sleep", "sleep", WATCHER_NAME]), names(pgid)
    process.kill()
    assert wait_until(lambda: not in_group(pgid), 5), names(pgid)


def test_a_tethered_command_is_the_command_and_leaves_no_watcher() -> None:
    phase = subprocess.Popen(tethered(["sh", "-c", "echo $$; exit 3"]), stdout=subprocess.PIPE, text=True,
                             start_new_session=True)
    output, _ = phase.communicate(timeout=30)
    assert phase.returncode == 3 and int(output) == phase.pid
    assert wait_until(lambda: not in_group(phase.pid), 5), names(phase.pid)
