"""The kind node image, built in the background from the start of a session that will use it: the build (12-18 min
cold) overlaps the embedded cluster's tests, which spend most of their time waiting on the cluster, and runs niced
so they keep the CPU when they need it. Warm, the build only finds the image up to date."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE

NICENESS = "15"


class BackgroundBuild:
    """`winsuite cluster build --kind` started now, its output in `log`; `wait()` before the kind cluster is made."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.started = time.monotonic()
        with log.open("wb") as out:
            self.process = subprocess.Popen(["nice", "-n", NICENESS, *WINSUITE, "cluster", "build", "--kind"],
                                            cwd=PROJECT_ROOT, stdin=subprocess.DEVNULL, stdout=out,
                                            stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def failed(self) -> bool:
        return self.process.returncode not in (None, 0)

    def last_lines(self, count: int = 15) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-count:])

    def wait(self, timeout: float) -> str:
        """Wait for the build; one line on how it went (`failed` then says whether the image is missing)."""
        waited = time.monotonic()
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            return f"the background kind node image build did not end within {timeout:.0f}s (log: {self.log})"
        ahead, blocked = waited - self.started, time.monotonic() - waited
        return (f"background kind node image build: exit {code}; started {ahead:.0f}s before the kind tests, which "
                f"waited {blocked:.0f}s for it (its time: the log, {self.log})")

    def stop(self) -> None:
        """Stop the build and what it started (its Go builds, debootstrap, the engine's import): its process group."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
