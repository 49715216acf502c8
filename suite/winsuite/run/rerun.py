"""`winsuite run --rerun-failed`: the failed, flaky and interrupted tests of a stored build, run again as a new
build of the same job with the same settings."""

from __future__ import annotations

import dataclasses
import functools
import time
from pathlib import Path
from typing import Any

from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.errors import one_line
from winsuite.given_paths import Found
from winsuite.given_paths import probe
from winsuite.given_paths import shown
from winsuite.policy.run_config import RUN_FILE
from winsuite.policy.run_config import RunConfig
from winsuite_reports.conventions import STARTED
from winsuite_reports.conventions import artifacts_dir
from winsuite_reports.model import Status
from winsuite_reports.prow import MALFORMED
from winsuite_reports.prow import read_build

RERUN_STATUSES = (Status.FAIL, Status.FLAKY)


@dataclasses.dataclass(frozen=True)
class Rerun:
    """What to run again, and the run (its stored document) the build comes from."""

    build_dir: Path
    names: list[str]  # failed, flaky or interrupted tests, by full name

    @functools.cached_property
    def run(self) -> RunConfig:
        """The run as the build recorded it (artifacts/run.json), which a rerun starts from."""
        run_file = artifacts_dir(self.build_dir) / RUN_FILE
        if not run_file.is_file():
            raise UsageError(f"--rerun-failed: {self.build_dir} has no {run_file.relative_to(self.build_dir)} (the "
                             "run it records is what a rerun starts from); run its tests again with --focus")
        return RunConfig.load(run_file)

    @property
    def build_id(self) -> str:
        return self.build_dir.name

    def metadata_entries(self) -> dict[str, Any]:
        """What the new build's metadata says of the build it reran."""
        return {"rerun-of": self.build_id, "rerun-of-dir": str(self.build_dir.resolve()),
                "rerun-tests": len(self.names)}

    def results_root(self) -> Path | None:
        """The results root the build sits in (so the new build goes next to it), when it sits in one."""
        job_dir = self.build_dir.parent
        return job_dir.parent if job_dir.name == self.run.job.name else None


def find_build(ref: str, results_root: Path) -> Path:
    """A build directory given as a path, or as a build id under <results root>/<job>/."""
    path = Path(ref)
    if probe(path / STARTED, "build (--rerun-failed)") is Found.FILE:
        return path
    if probe(results_root, "results root") is not Found.DIRECTORY:
        raise UsageError(f"--rerun-failed {shown(ref)}: no build directory (with {STARTED}) there, and no results "
                         f"root {shown(results_root)}")
    candidates = sorted(p for p in results_root.glob(f"*/{ref}") if (p / STARTED).is_file())
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        raise UsageError(f"--rerun-failed {ref}: build id of several jobs ({', '.join(map(str, candidates))}); "
                         "give the build directory")
    raise UsageError(f"--rerun-failed {shown(ref)}: no build directory (with {STARTED}) there or under "
                     f"{shown(results_root)}/*/")


def load_rerun(ref: str, results_root: Path) -> Rerun:
    build_dir = find_build(ref, results_root)
    build = read_build(build_dir, now=time.time())
    if build.overall.message.startswith(MALFORMED):  # rerunning part of what failed would hide the rest
        raise DataError(build_dir, "", f"--rerun-failed: {one_line(build.overall.message)}")
    names = sorted(key for key, cell in build.cells.items() if cell.status in RERUN_STATUSES or cell.interrupted)
    return Rerun(build_dir, names)
