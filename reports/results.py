"""A results root in the prow layout (`<root>/<job>/<build>/…`) read into a History, newest build first."""

from __future__ import annotations

import contextlib
import os
import re
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from winsuite_reports.cache import BuildCache
from winsuite_reports.cache import fingerprint
from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import STARTED
from winsuite_reports.model import Build
from winsuite_reports.model import History
from winsuite_reports.model import Job
from winsuite_reports.model import RowInfo
from winsuite_reports.prow import ParsedBuild
from winsuite_reports.prow import column
from winsuite_reports.prow import parse_build

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
    root: Path, *, now: float | None = None, max_builds: int = 0, skip: Path | None = None, cache: bool = True
) -> History:
    """Read every job under `root` (or `root` itself when it holds builds), except `skip` (the output).

    With `cache`, each build's parse is kept in the root's cache file and read from there while its files do not
    change (see reports.cache); the History is the same either way."""
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
    with BuildCache(root) if cache and job_dirs else contextlib.nullcontext() as store:
        jobs = [read_job(path, now=now, max_builds=max_builds, cache=store) for path in job_dirs]
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


def read_job(
    job_dir: Path, *, now: float, max_builds: int = 0, workers: int = 0, cache: BuildCache | None = None
) -> Job:
    """One tab: its builds (the newest `max_builds` when set) and the rows they hold.

    Builds the cache does not hold are parsed; parsing JUnit is most of the time a long history takes, so many
    builds are parsed by `workers` processes (default: one per CPU), each a contiguous run of builds.
    """
    every_build = build_dirs(job_dir)
    paths = every_build[: max_builds or None]
    prints = {path: fingerprint(path) for path in paths} if cache is not None else {}
    parsed: dict[Path, ParsedBuild] = {}
    if cache is not None:
        for path in paths:
            stored = cache.get(path, prints[path])
            if stored is not None:
                parsed[path] = stored
    missing = [path for path in paths if path not in parsed]
    parsed.update(zip(missing, _parse_builds(missing, workers), strict=True))
    if cache is not None:
        cache.put((path, prints[path], parsed[path]) for path in missing)
        cache.forget_others(job_dir, every_build)
    rows: dict[str, RowInfo] = {}
    builds = [column(parsed[path], now=now, rows=rows) for path in paths]  # newest first: its row facts win
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


def _parse_builds(paths: list[Path], workers: int) -> list[ParsedBuild]:
    """The builds' files parsed, in order; by several processes when there are many."""
    workers = workers or ((os.cpu_count() or 1) if len(paths) >= PARALLEL_FROM else 1)
    size = -(-len(paths) // workers) or 1
    chunks = [paths[i : i + size] for i in range(0, len(paths), size)]
    if len(chunks) <= 1:
        return [parse_build(path) for path in paths]
    with ProcessPoolExecutor(len(chunks)) as pool:
        return [parsed for chunk in pool.map(_parse_chunk, chunks) for parsed in chunk]


def _parse_chunk(paths: list[Path]) -> list[ParsedBuild]:
    return [parse_build(path) for path in paths]


def _first(builds: list[Build], key: str) -> object:
    """A job-level fact from the newest build whose metadata has it."""
    return next((build.metadata[key] for build in builds if build.metadata.get(key) not in (None, "")), None)
