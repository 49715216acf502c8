"""`winsuite run --rerun-failed`: the failed, flaky and interrupted tests of a stored build, run again as a new
build of the same job with the same settings."""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path
from typing import Any

from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.errors import one_line
from winsuite.given_paths import Found
from winsuite.given_paths import probe
from winsuite.given_paths import shown
from winsuite.policy.selection import exact_focus
from winsuite_reports.conventions import STARTED
from winsuite_reports.model import Status
from winsuite_reports.prow import MALFORMED
from winsuite_reports.prow import read_build
from winsuite_reports.prow import read_json_object

# What a build's metadata (started.json) records of how it ran -> the `winsuite run` argument it fills in.
RECORDED = {"node-os": "winsuite_node_os", "engine": "winsuite_engine", "flake-attempts": "winsuite_flake_attempts",
            "parallelism": "parallelism", "cases": "cases"}
DEFAULT_CASES = "winsuite.cases"
RERUN_STATUSES = (Status.FAIL, Status.FLAKY)


@dataclasses.dataclass(frozen=True)
class Rerun:
    """What to run again, and how the build it comes from was run."""

    build_dir: Path
    names: list[str]  # failed, flaky or interrupted tests, by full name
    metadata: dict[str, Any]

    @property
    def build_id(self) -> str:
        return self.build_dir.name

    @property
    def focus(self) -> str:
        return exact_focus(self.names)

    @property
    def job_file(self) -> str | None:
        """The job file the build ran, when it still exists."""
        recorded = self.metadata.get("job-file")
        return str(recorded) if isinstance(recorded, str) and Path(recorded).is_file() else None

    def applied_to(self, args: argparse.Namespace) -> argparse.Namespace:
        """The command line with what the build recorded filled in (options given win) and the focus on
        exactly the tests to run again."""
        if getattr(args, "winsuite_focus", None):
            raise UsageError("--rerun-failed selects the tests to run itself; leave out --focus")
        given = vars(args)
        filled = dict(given, winsuite_focus=[self.focus])
        for key, dest in RECORDED.items():
            value = self.metadata.get(key)
            unset = given.get(dest) is None or (dest == "cases" and given.get(dest) == DEFAULT_CASES)
            if unset and value not in (None, ""):
                filled[dest] = value
        if not given.get("winsuite_job") and self.job_file:
            filled["winsuite_job"] = self.job_file
        if not given.get("artifacts") and self.build_dir.parent.name == self.metadata.get("job"):
            filled["results_root"] = str(self.build_dir.parent.parent)  # a new build next to the one it reruns
        return argparse.Namespace(**filled)

    def metadata_entries(self) -> dict[str, Any]:
        """What the new build's metadata says of the build it reran."""
        return {"rerun-of": self.build_id, "rerun-of-dir": str(self.build_dir.resolve()),
                "rerun-tests": len(self.names)}


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
    return Rerun(build_dir, names, _metadata(build_dir))


def _metadata(build_dir: Path) -> dict[str, Any]:
    try:
        started = read_json_object(build_dir / STARTED)
    except OSError as err:
        raise UsageError(f"--rerun-failed: cannot read {build_dir / STARTED}: {err.strerror}") from None
    except ValueError as err:
        raise DataError(build_dir, "", f"--rerun-failed: {err}") from None
    metadata = started.get("metadata")
    return dict(metadata) if isinstance(metadata, dict) else {}
