"""The prow layout's vocabulary: a build's result, its id, the names of files in it (results/build.py writes them)."""

from __future__ import annotations

import enum
import hashlib
import re
import time
from pathlib import Path


class BuildResult(enum.StrEnum):
    """What finished.json says of a build (TestGrid reads `passed` beside it: true for SUCCESS only)."""

    SUCCESS = "SUCCESS"
    FAILURE = "FAILURE"
    ABORTED = "ABORTED"  # a signal or the run timeout ended it

    @property
    def passed(self) -> bool:
        return self is BuildResult.SUCCESS

    @classmethod
    def stored(cls, value: object) -> BuildResult:
        """The result a stored finished.json gives; one it does not give (absent, unknown) is a FAILURE."""
        return next((result for result in cls if result.value == value), cls.FAILURE)


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


def diagnostics_dir_name(full_name: str, attempt: int) -> str:
    """A stable, filesystem-safe directory per test (and attempt) under artifacts/."""
    words = re.sub(r"[^A-Za-z0-9]+", "_", re.sub(r"\[[^\]]*\]", "", full_name)).strip("_")[:80]
    digest = hashlib.sha256(full_name.encode()).hexdigest()[:8]
    return f"{words}_{digest}" + (f"_attempt{attempt}" if attempt > 1 else "")
