"""Waiting for a started component to be ready, failing fast with its log when it exits."""

from __future__ import annotations

import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from winsuite.components.errors import ComponentFailed
from winsuite.components.logs import tail
from winsuite.components.processes import Process
from winsuite.components.processes import alive
from winsuite.components.progress import elapsed


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


def readyz_problem(server: str, ca: Path, timeout: float = 2.0) -> str | None:
    """None when the API server answers GET /readyz with ok within `timeout`; else what it did instead (a process
    can be alive and not serving: stopped, or wedged in its shutdown)."""
    context = ssl.create_default_context(cafile=str(ca)) if server.startswith("https") else None
    try:
        with urllib.request.urlopen(f"{server}/readyz", timeout=timeout, context=context) as response:
            body = response.read(4096).decode(errors="replace").strip()
    except urllib.error.HTTPError as err:
        return f"/readyz answered {err.code}"
    except TimeoutError:
        return f"/readyz did not answer within {timeout:g}s"
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        return f"/readyz: {'no answer in time' if isinstance(reason, TimeoutError) else reason}"
    return None if body == "ok" else f"/readyz answered {body[:80]!r}"


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
