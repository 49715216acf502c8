"""The kind node image, built in the background from the start of a session that will use it: the build (12-18 min
cold) overlaps the embedded cluster's tests, which spend most of their time waiting on the cluster, and runs niced
so they keep the CPU when they need it. Warm, the build only finds the image up to date.

The session's main process starts it; the worker that runs the kind tests waits for it through its files (the exit
code is written beside the log when the build ends)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from winsuite.cluster.kind.paths import kind_dir

NICENESS = "15"
STATUS_NAME = "kind-node-image-build"  # in the session's directory: .exit (its code, when it ended) and .started


class BackgroundBuild:
    """The session's `winsuite cluster build --kind`: its output in kind's log directory (kept after the session),
    its start and exit code in the session's directory; `process` is set in the process that started it (the only one
    that stops it)."""

    def __init__(self, session_dir: Path, process: subprocess.Popen[bytes] | None = None) -> None:
        self.log = kind_dir() / "logs" / f"test-session-build-{session_dir.name}.log"
        self.process = process
        self.exit_file = session_dir / f"{STATUS_NAME}.exit"
        self.started_file = session_dir / f"{STATUS_NAME}.started"

    @classmethod
    def start(cls, session_dir: Path) -> BackgroundBuild:
        build = cls(session_dir)
        build.log.parent.mkdir(parents=True, exist_ok=True)
        build.started_file.write_text(str(time.time()))
        with build.log.open("wb") as out:
            build.process = subprocess.Popen(
                ["sh", "-c", 'nice -n "$0" "$@"; echo $? > "$EXIT_FILE"', NICENESS, *WINSUITE, "cluster", "build",
                 "--kind"],
                cwd=PROJECT_ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, env={**os.environ, "EXIT_FILE": str(build.exit_file)})
        return build

    @classmethod
    def of_session(cls, session_dir: Path | None) -> BackgroundBuild | None:
        """The session's build, when its main process started one."""
        if session_dir is None or not (session_dir / f"{STATUS_NAME}.started").exists():
            return None
        return cls(session_dir)

    @property
    def exit_code(self) -> int | None:
        text = self.exit_file.read_text().strip() if self.exit_file.exists() else ""
        return int(text) if text else None

    @property
    def failed(self) -> bool:
        return self.exit_code not in (None, 0)

    def last_lines(self, count: int = 15) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-count:])

    def wait(self, timeout: float) -> str:
        """Wait for the build; one line on how it went (`failed` then says whether the image is missing)."""
        waited = time.time()
        while self.exit_code is None:
            if time.time() - waited > timeout:
                return f"the background kind node image build did not end within {timeout:.0f}s (log: {self.log})"
            time.sleep(1)
        ahead, blocked = waited - float(self.started_file.read_text()), time.time() - waited
        return (f"background kind node image build: exit {self.exit_code}; started {ahead:.0f}s before the kind tests, "
                f"which waited {blocked:.0f}s for it (its time: the log, {self.log})")

    def stop(self) -> None:
        """Stop the build and what it started (its Go builds, debootstrap, the engine's import): its process group."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
