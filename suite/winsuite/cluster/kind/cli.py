"""The kind CLI: the one on PATH, else the pinned one built from the Go module proxy; its commands, with progress."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from winsuite.cluster.kind.engine import ContainerEngine
from winsuite.components.artifacts import Group
from winsuite.components.artifacts import locate
from winsuite.components.artifacts import select
from winsuite.components.build import Builder
from winsuite.components.errors import ComponentFailed
from winsuite.components.logs import tail
from winsuite.components.progress import Reporter
from winsuite.components.progress import elapsed
from winsuite.errors import UsageError
from winsuite.inputs.pins import load_pins


def find(report: Reporter, bin_dir: Path | None = None, *, build: bool = True) -> Path | None:
    """`kind` on PATH, else the pinned build (built now when `build`; None when absent and not built)."""
    on_path = shutil.which("kind")
    if on_path:
        return Path(on_path)
    pins = load_pins()
    (artifact,) = (a for a in select(pins, [Group.KIND_NODE]) if a.name == "kind")
    found = locate(artifact, bin_dir)
    if found is not None or not build:
        return found
    return Builder(pins, report, bin_dir).ensure([artifact])["kind"]


def output(kind: Path, engine: ContainerEngine, args: Sequence[str], timeout: float = 120) -> str:
    done = subprocess.run([str(kind), *args], capture_output=True, text=True, env=engine.env(), timeout=timeout,
                          check=False)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise UsageError(f"`kind {' '.join(args[:2])}` failed: {lines[-1] if lines else f'exit {done.returncode}'}")
    return done.stdout


def attempt(kind: Path, engine: ContainerEngine, args: Sequence[str], timeout: float = 300) -> str | None:
    """Run a kind command whose failure is reported rather than raised: None, or its last error line."""
    try:
        output(kind, engine, args, timeout)
    except (UsageError, subprocess.TimeoutExpired) as err:
        return str(err)
    return None


def clusters(kind: Path, engine: ContainerEngine) -> list[str]:
    return output(kind, engine, ["get", "clusters"]).split()


def run(kind: Path, engine: ContainerEngine, args: Sequence[str], *, log: Path, report: Reporter,
        timeout: float) -> None:
    """Run a long kind command, its output in `log` and its status lines as progress; raises with the log's tail."""
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with log.open("w") as out:
        out.write(f"$ kind {' '.join(args)}\n")
        out.flush()
        proc = subprocess.Popen([str(kind), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=engine.env())
        assert proc.stdout is not None
        watchdog = threading.Timer(timeout, proc.kill)  # a kind that hangs without a word still ends
        watchdog.start()
        try:
            for line in proc.stdout:
                out.write(line)
                out.flush()
                if line.strip().startswith(("✓", "✗")):  # kind's step lines
                    report(f"  {line.strip()} ({elapsed(time.monotonic() - started)})")
            code = proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        finally:
            watchdog.cancel()
    if code != 0:
        raise ComponentFailed(f"`kind {' '.join(args[:2])}` failed (exit {code}); log {log}:\n{tail(log, 25)}")
