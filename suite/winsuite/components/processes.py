"""Cluster components as child processes: started with their own log, checked and stopped by pid."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import select
import signal
import subprocess
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class Process:
    """A started component. `start_ticks` guards against a recycled pid being taken for it."""

    name: str
    pid: int
    start_ticks: int
    log: str


def _stat(pid: int) -> tuple[str, int] | None:
    """(state letter, start time in clock ticks) of a pid, None when it does not exist."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()  # the command name may contain spaces
    return fields[0], int(fields[19])


def spawn(name: str, argv: Sequence[str], log: Path, env: Mapping[str, str] | None = None) -> Process:
    """Start a component in its own session (a terminal's Ctrl-C must not reach it) writing to `log`."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=dict(env) if env is not None else None,
        )
    stat = _stat(proc.pid)
    return Process(name, proc.pid, stat[1] if stat else 0, str(log))


def adopt(name: str, pid: int) -> Process | None:
    """A record for a running process found by other means (a shim found by the socket it serves)."""
    stat = _stat(pid)
    return Process(name, pid, stat[1], "") if stat else None


def alive(proc: Process) -> bool:
    stat = _stat(proc.pid)
    return stat is not None and stat[0] != "Z" and stat[1] == proc.start_ticks


def _reap(pid: int) -> None:
    """Collect the exit status when the process is our child, so it does not linger as a zombie."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def wait_exit(proc: Process, timeout: float) -> bool:
    """Block until the process exits (pidfd: no polling), True if it did within `timeout`."""
    if not alive(proc):
        _reap(proc.pid)
        return True
    try:
        fd = os.pidfd_open(proc.pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    _reap(proc.pid)
    return bool(ready) or not alive(proc)


def stop(proc: Process, grace: float = 10.0) -> bool:
    """SIGTERM, then SIGKILL after `grace` seconds; only the recorded pid, never a name. True when it took
    SIGKILL (a process wedged in its shutdown, or stopped with SIGSTOP: SIGCONT lets it act on the SIGTERM)."""
    for sig, timeout in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        if not alive(proc):
            _reap(proc.pid)
            return sig == signal.SIGKILL
        try:
            os.kill(proc.pid, sig)
            if sig == signal.SIGTERM:
                os.kill(proc.pid, signal.SIGCONT)
        except ProcessLookupError:
            return False
        if wait_exit(proc, timeout):
            return sig == signal.SIGKILL
    raise RuntimeError(f"failed to stop {proc.name} (pid {proc.pid}): still running after SIGKILL")


def pids_with_argument(needle: str) -> list[int]:
    """Processes whose command line mentions `needle` (e.g. our private containerd socket).

    Used for shims, which containerd starts detached: their pids are found by the socket they serve,
    which only this cluster uses, and then stopped one by one.
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if needle.encode() in cmdline and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found
