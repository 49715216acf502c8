"""The prow layout of one build: started.json, finished.json, metadata.json, latest-build.txt, build ids."""

from __future__ import annotations

import hashlib
import json
import platform
import re
import time
from pathlib import Path
from typing import Any

from winsuite.results.junit import write_atomically
from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import LATEST_BUILD
from winsuite_reports.conventions import METADATA
from winsuite_reports.conventions import STARTED
from winsuite_reports.conventions import artifacts_dir

RESULTS = ("SUCCESS", "FAILURE", "ABORTED")
# What `winsuite run` discovered of the cluster (artifacts/), handed to its pytest phases.
DISCOVERY_FILE = "discovery.json"
SHARD_METADATA = "shard"  # a shard's build says which one it is: "I/N"


def new_build_id(job_dir: Path) -> str:
    """14-digit UTC start time (natural order is chronological, as TestGrid needs); the build's directory is
    created here, atomically, so two runs starting in the same second never share it."""
    job_dir.mkdir(parents=True, exist_ok=True)
    now = time.time()
    while True:
        build = time.strftime("%Y%m%d%H%M%S", time.gmtime(now))
        try:
            (job_dir / build).mkdir()
        except FileExistsError:
            now += 1
            continue
        return build


def _write_json(path: Path, value: dict[str, Any]) -> None:
    write_atomically(path, (json.dumps(value, indent=2, sort_keys=True) + "\n").encode())


def write_started(build_dir: Path, timestamp: float, metadata: dict[str, Any]) -> None:
    _write_json(build_dir / STARTED,
                {"timestamp": int(timestamp), "node": platform.node(), "metadata": metadata})


def write_finished(build_dir: Path, *, passed: bool, result: str, metadata: dict[str, Any]) -> None:
    """Both `passed` and `result`: TestGrid reads `passed` and flags its absence."""
    if result not in RESULTS:
        raise ValueError(f"result {result!r} is not one of {RESULTS}")
    _write_json(build_dir / FINISHED,
                {"timestamp": int(time.time()), "passed": passed, "result": result, "metadata": metadata})
    _write_json(artifacts_dir(build_dir) / METADATA, metadata)


def write_latest_build(job_dir: Path, build: str) -> None:
    write_atomically(job_dir / LATEST_BUILD, build.encode())


def diagnostics_dir_name(full_name: str, attempt: int) -> str:
    """A stable, filesystem-safe directory per test (and attempt) under artifacts/."""
    words = re.sub(r"[^A-Za-z0-9]+", "_", re.sub(r"\[[^\]]*\]", "", full_name)).strip("_")[:80]
    digest = hashlib.sha256(full_name.encode()).hexdigest()[:8]
    return f"{words}_{digest}" + (f"_attempt{attempt}" if attempt > 1 else "")
