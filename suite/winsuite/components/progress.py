"""Progress lines for long steps (which step, elapsed time) and the command runner that prints them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path

from winsuite.components.errors import BuildFailed
from winsuite.components.logs import tail

Reporter = Callable[[str], None]

HEARTBEAT_SECONDS = 30.0


def stderr_reporter(line: str) -> None:
    print(f"winsuite: {line}", file=sys.stderr, flush=True)


def elapsed(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def run_step(
    argv: Sequence[str],
    *,
    label: str,
    log: Path,
    report: Reporter,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> float:
    """Run a long command with its output in `log`, saying every 30 s that it is still going.

    Returns the elapsed seconds; raises BuildFailed with the log's tail when the command fails.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with log.open("w") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        proc = subprocess.Popen(
            list(argv), cwd=cwd, env=dict(env if env is not None else os.environ), stdout=out, stderr=out
        )
        try:
            while True:
                try:
                    code = proc.wait(timeout=HEARTBEAT_SECONDS)
                    break
                except subprocess.TimeoutExpired:
                    report(f"  … {label} ({elapsed(time.monotonic() - started)})")
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    if code != 0:
        raise BuildFailed(f"failed to build {label} (exit {code}); log {log}:\n{tail(log)}")
    return time.monotonic() - started
