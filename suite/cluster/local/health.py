"""Waiting for a started component to be ready, failing fast with its log when it exits."""

from __future__ import annotations

import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from winsuite.cluster.local.errors import ComponentFailed
from winsuite.cluster.local.logs import tail
from winsuite.cluster.local.processes import Process
from winsuite.cluster.local.processes import alive
from winsuite.cluster.local.progress import elapsed


def crashed(proc: Process, what: str = "exited") -> ComponentFailed:
    log = Path(proc.log)
    return ComponentFailed(f"{proc.name} (pid {proc.pid}) {what}; last lines of {log}:\n{tail(log)}")


def http_probe(url: str, expect: str, ca: Path | None = None) -> Callable[[], bool]:
    """True once `url` answers with a body containing `expect` (TLS verified against `ca` when given)."""
    context = ssl.create_default_context(cafile=str(ca)) if url.startswith("https") else None

    def probe() -> bool:
        try:
            with urllib.request.urlopen(url, timeout=2, context=context) as response:
                return expect in response.read().decode(errors="replace")
        except (urllib.error.URLError, OSError):
            return False

    return probe


def wait_until(proc: Process, ready: Callable[[], bool], *, what: str, timeout: float) -> float:
    """Poll `ready` (a health endpoint or socket: nothing to watch) until true; returns the seconds taken.

    Raises ComponentFailed with the log tail as soon as the process exits, or at the deadline.
    """
    started = time.monotonic()
    pause = 0.05
    while not ready():
        if not alive(proc):
            raise crashed(proc)
        if time.monotonic() - started > timeout:
            raise crashed(proc, f"is not {what} after {elapsed(timeout)}")
        time.sleep(pause)
        pause = min(pause * 2, 0.5)
    return time.monotonic() - started
