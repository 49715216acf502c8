"""A results root in the prow layout (`<root>/<job>/<build>/…`) read into a History, newest build first."""

from __future__ import annotations

import os
import re
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import STARTED
from winsuite_reports.model import Build
from winsuite_reports.model import History
from winsuite_reports.model import Job
from winsuite_reports.model import RowInfo
from winsuite_reports.prow import read_build

DEFAULT_DASHBOARD = "default"
PARALLEL_FROM = 64  # builds; for fewer, starting worker processes costs more than it saves
BUILD_MARKERS = (STARTED, FINISHED)
_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key comparing digit runs as numbers (TestGrid's sortorder.NaturalLess)."""
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part) for part in _DIGITS.split(text) if part
    )


def load_history(
    root: Path, *, now: float | None = None, max_builds: int = 0, skip: Path | None = None
) -> History:
    """Read every job under `root` (or `root` itself when it holds builds), except `skip` (the output)."""
    now = time.time() if now is None else now
    if build_dirs(root):
        job_dirs = [root]
    else:
        skipped = skip.resolve() if skip is not None else None
        job_dirs = [
            path
            for path in sorted(root.iterdir(), key=lambda p: natural_key(p.name))
            if path.is_dir() and path.resolve() != skipped and build_dirs(path)
        ]
    jobs = [read_job(path, now=now, max_builds=max_builds) for path in job_dirs]
    jobs.sort(key=lambda job: (job.dashboard, natural_key(job.tab)))
    return History(root, jobs)


def build_dirs(job_dir: Path) -> list[Path]:
    """The job's build directories, newest first (build ids sort increasingly)."""
    if not job_dir.is_dir():
        return []
    builds = [
        path
        for path in job_dir.iterdir()
        if path.is_dir() and any((path / marker).is_file() for marker in BUILD_MARKERS)
    ]
    return sorted(builds, key=lambda p: natural_key(p.name), reverse=True)


def read_job(job_dir: Path, *, now: float, max_builds: int = 0, workers: int = 0) -> Job:
    """One tab: its builds (the newest `max_builds` when set) and the rows they hold.

    Parsing JUnit is most of the time a large history takes, so long histories are read by `workers`
    processes (default: one per CPU), each a contiguous run of builds, and joined newest first.
    """
    paths = build_dirs(job_dir)[: max_builds or None]
    workers = workers or ((os.cpu_count() or 1) if len(paths) >= PARALLEL_FROM else 1)
    size = -(-len(paths) // workers) or 1
    chunks = [paths[i : i + size] for i in range(0, len(paths), size)]
    if len(chunks) > 1:
        with ProcessPoolExecutor(len(chunks)) as pool:
            parts = list(pool.map(_read_builds, chunks, [now] * len(chunks)))
    else:
        parts = [_read_builds(paths, now)]
    builds: list[Build] = []
    rows: dict[str, RowInfo] = {}
    for chunk_builds, chunk_rows in parts:
        builds += chunk_builds
        for key, info in chunk_rows.items():
            rows.setdefault(key, info)  # the newest build's facts win
    blocking = _first(builds, "release-blocking")
    return Job(
        name=job_dir.name,
        path=job_dir,
        dashboard=str(_first(builds, "dashboard") or DEFAULT_DASHBOARD),
        tab=str(_first(builds, "tab") or job_dir.name),
        release_blocking=blocking is True or str(blocking).lower() == "true",
        builds=builds,
        rows=dict(sorted(rows.items())),
    )


def _read_builds(paths: list[Path], now: float) -> tuple[list[Build], dict[str, RowInfo]]:
    rows: dict[str, RowInfo] = {}
    return [read_build(path, now=now, rows=rows) for path in paths], rows


def _first(builds: list[Build], key: str) -> object:
    """A job-level fact from the newest build whose metadata has it."""
    return next((build.metadata[key] for build in builds if build.metadata.get(key) not in (None, "")), None)
