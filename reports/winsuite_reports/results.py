"""A results root in the prow layout (`<root>/<job>/<build>/…`) read into a History, newest build first."""

from __future__ import annotations

import contextlib
import gc
import os
import re
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from winsuite_reports import job_grid
from winsuite_reports.build_codec import UNDECODABLE
from winsuite_reports.build_codec import Encoded
from winsuite_reports.build_codec import decode
from winsuite_reports.build_codec import decode_rows
from winsuite_reports.build_codec import encode
from winsuite_reports.build_codec import encode_rows
from winsuite_reports.cache import BuildCache
from winsuite_reports.cache import fingerprints
from winsuite_reports.cache import new_since
from winsuite_reports.collection import collection_paused
from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import STARTED
from winsuite_reports.derived import derive
from winsuite_reports.failures import FailureClustering
from winsuite_reports.job import History
from winsuite_reports.job import Job
from winsuite_reports.job import transposed
from winsuite_reports.model import Build
from winsuite_reports.model import RowInfo
from winsuite_reports.model import by_key
from winsuite_reports.placement import RowPlacement
from winsuite_reports.prow import MalformedJson
from winsuite_reports.prow import ParsedBuild
from winsuite_reports.prow import column
from winsuite_reports.prow import parse_build
from winsuite_reports.prow import read_json_object

DEFAULT_DASHBOARD = "default"
PARALLEL_FROM = 64  # builds; for fewer, starting worker processes costs more than it saves
BUILD_MARKERS = (STARTED, FINISHED)
_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key comparing digit runs as numbers (TestGrid's sortorder.NaturalLess)."""
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part) for part in _DIGITS.split(text) if part
    )


@collection_paused()
def load_history(
    root: Path, *, now: float | None = None, max_builds: int = 0, since: float | None = None, skip: Path | None = None,
    cache: bool = True
) -> History:
    """Read every job under `root` (or `root` itself when it holds builds, or the one build `root` is), except `skip`
    (the output); per job the newest `max_builds` builds (0: all) that started at `since` or later (None: all).

    With `cache`, each build's parse is kept in the root's cache file and read from there while its files do not
    change (see reports.cache); the History is the same either way. One build is read without the cache (a cache
    file is never written into a build)."""
    now = time.time() if now is None else now
    if is_build(root):
        return History(root, [read_job(root.parent, now=now, only=[root])])
    # Each job's builds listed once (a listing costs a stat or two per build).
    listed = {root: build_dirs(root)}
    if not listed[root]:
        skipped = skip.resolve() if skip is not None else None
        listed = {path: build_dirs(path) for path in sorted(root.iterdir(), key=lambda p: natural_key(p.name))
                  if path.is_dir() and path.resolve() != skipped}
    job_dirs = [path for path, builds in listed.items() if builds]
    with BuildCache(root) if cache and job_dirs else contextlib.nullcontext() as store:
        jobs = [read_job(path, now=now, max_builds=max_builds, since=since, cache=store, only=listed[path])
                for path in job_dirs]
        if store is not None and job_dirs != [root]:  # a root of jobs: jobs removed since are forgotten
            store.forget_jobs_other_than(job_dirs)
    jobs.sort(key=lambda job: (job.dashboard, natural_key(job.tab)))
    return History(root, jobs)


def is_build(path: Path) -> bool:
    """A build directory: it has started.json or finished.json."""
    return path.is_dir() and _has_marker(str(path))


def build_dirs(job_dir: Path) -> list[Path]:
    """The job's build directories, newest first (build ids sort increasingly)."""
    if not job_dir.is_dir():
        return []
    with os.scandir(job_dir) as entries:  # an entry knows whether it is a directory without a stat
        builds = [job_dir / entry.name for entry in entries if entry.is_dir() and _has_marker(entry.path)]
    return sorted(builds, key=lambda p: natural_key(p.name), reverse=True)


def _has_marker(directory: str) -> bool:
    return any(os.path.isfile(os.path.join(directory, marker)) for marker in BUILD_MARKERS)


def started_since(builds: list[Path], since: float) -> list[Path]:
    """The builds (newest first) up to the first one that started before `since`; a build whose start cannot be
    read is kept (its column says why)."""
    for index, path in enumerate(builds):
        try:
            started = read_json_object(path / STARTED).get("timestamp")
        except (OSError, MalformedJson):
            continue
        if isinstance(started, int | float) and not isinstance(started, bool) and started < since:
            return builds[:index]
    return builds


def read_job(
    job_dir: Path, *, now: float, max_builds: int = 0, since: float | None = None, workers: int = 0,
    cache: BuildCache | None = None, only: list[Path] | None = None
) -> Job:
    """One tab: its builds (the newest `max_builds` when set; `only`: the job's builds, newest first, when they are
    listed already) and the rows they hold.

    Builds the cache does not hold are parsed; parsing JUnit is most of the time a long history takes, so many
    builds are parsed by `workers` processes (default: one per CPU), each a contiguous run of builds. With a
    cache, the job's grid and row facts come from the cache too, brought up to date with the builds that are new
    since (see reports.job_grid).
    """
    every_build = build_dirs(job_dir) if only is None else only
    paths = every_build[: max_builds or None]
    if since is not None:
        paths = started_since(paths, since)
    fresh: dict[Path, tuple[ParsedBuild, Encoded | None]] = {}
    parsed: dict[Path, ParsedBuild] = {}
    prints: dict[Path, str] = {}
    if cache is not None:
        # The builds the cache has no entry for (a long history's new ones) are parsed while a forked copy takes
        # every build's fingerprint, where there are few of them and many fingerprints.
        unlisted = [path for path in paths if not cache.holds(path)]
        with fingerprints(paths, beside=len(paths) >= PARALLEL_FROM and 0 < len(unlisted) < PARALLEL_FROM) as printed:
            fresh.update(zip(unlisted, _parse_builds(unlisted, workers, encoded=True), strict=True))
            prints.update(zip(paths, printed(), strict=True))
        for path in paths:
            stored = None if path in fresh else cache.get(path, prints[path])
            if stored is not None:
                parsed[path] = stored
    missing = [path for path in paths if path not in parsed and path not in fresh]
    fresh.update(zip(missing, _parse_builds(missing, workers, encoded=cache is not None), strict=True))
    parsed.update((path, build) for path, (build, _) in fresh.items())
    builds = [column(parsed[path], now=now) for path in paths]
    in_order = [parsed[path] for path in paths]
    if cache is None:
        return _with_evidence(_job(job_dir, builds, by_key(_row_facts(in_order)), None), in_order)
    cache.put((path, prints[path], encoded or encode(build)) for path, (build, encoded) in fresh.items())
    cache.forget_others(job_dir, every_build)
    listed = [(cache.key(path), prints[path]) for path in paths]
    if len(paths) == 1:  # the grid is the one build's column: nothing a next report could extend is worth keeping
        return _with_evidence(_job(job_dir, builds, by_key(_row_facts(in_order)), None), in_order, cache, listed)
    rows, grid = _rows_and_grid(cache, job_dir, listed, in_order, builds)
    return _with_evidence(_job(job_dir, builds, rows, grid), in_order, cache, listed)


def _with_evidence(job: Job, parsed: list[ParsedBuild], cache: BuildCache | None = None,
                   listed: list[tuple[str, str]] | None = None) -> Job:
    """The job with its failures clustered and where its rows ran (reports.failures, reports.placement), made as
    its grid is: from the cache, brought up to date, when there is one."""
    job.failures = derive(FailureClustering(), parsed, cache=cache, job_dir=job.path, listed=listed or [])
    job.placement = derive(RowPlacement(), parsed, cache=cache, job_dir=job.path, listed=listed or [])
    return job


def _rows_and_grid(cache: BuildCache, job_dir: Path, listed: list[tuple[str, str]], parsed: list[ParsedBuild],
                   builds: list[Build]) -> tuple[dict[str, RowInfo], job_grid.RunGrid]:
    """The job's row facts (sorted) and grid: the stored ones brought up to date when the cache has them, else made
    from the builds; the cache then holds them as they are now."""
    stored = cache.get_job(job_dir)
    update = _stored_grid(stored, listed) if stored is not None else None
    if update is not None:
        new, stored_rows, stored_grid = update
        if new == 0 and stored_grid.width == len(listed):  # nothing changed
            return stored_rows, stored_grid
        rows, grid = _extended(stored_rows, stored_grid, parsed[:new], builds[:new], len(listed) - new)
    else:
        rows = by_key(_row_facts(parsed))
        grid = job_grid.of_rows(transposed(builds, list(rows)), len(builds))
    cache.put_job(job_dir, listed, encode_rows(rows), job_grid.dumps(grid, list(rows)))
    return rows, grid


def _stored_grid(stored: tuple[list[tuple[str, str]], str, tuple[str, bytes]], listed: list[tuple[str, str]]
                 ) -> tuple[int, dict[str, RowInfo], job_grid.RunGrid] | None:
    """(builds new since, row facts, grid) of a stored job entry that the listed builds extend; else None."""
    stored_builds, rows_text, (cells, runs) = stored
    new = new_since(listed, stored_builds)
    if new is None:
        return None
    try:
        rows = decode_rows(rows_text)
        grid = job_grid.loads(cells, runs, list(rows))
    except UNDECODABLE:
        return None
    return (new, rows, grid) if grid.width == len(stored_builds) else None


def _extended(stored_rows: dict[str, RowInfo], stored_grid: job_grid.RunGrid, parsed: list[ParsedBuild],
              builds: list[Build], keep: int) -> tuple[dict[str, RowInfo], job_grid.RunGrid]:
    """The stored grid with the new builds in front and only its newest `keep` builds; rows only the builds gone
    had are gone too."""
    rows = _row_facts(parsed)
    grid = job_grid.extended(stored_grid, builds, keep, rows.keys() | stored_rows.keys())
    present = job_grid.row_keys_with_cells(grid)
    for key, info in stored_rows.items():
        if key in present:
            rows.setdefault(key, info)
    grid.runs = {key: runs for key, runs in grid.runs.items() if key in present}
    return by_key(rows), grid


def _row_facts(parsed: list[ParsedBuild]) -> dict[str, RowInfo]:
    """Each row's facts from the newest build that has it (builds newest first); a build with no row that is new
    to the builds before it needs none of its facts decoded."""
    rows: dict[str, RowInfo] = {}
    for build in parsed:
        if not rows:  # the newest build's facts, all of them
            rows = dict(build.rows)
        elif not rows.keys() >= build.cells.keys():
            for key, info in build.rows.items():
                rows.setdefault(key, info)
    return rows


def _job(job_dir: Path, builds: list[Build], rows: dict[str, RowInfo], grid: job_grid.RunGrid | None) -> Job:
    blocking = _first(builds, "release-blocking")
    return Job(
        name=job_dir.name,
        path=job_dir,
        dashboard=str(_first(builds, "dashboard") or DEFAULT_DASHBOARD),
        tab=str(_first(builds, "tab") or job_dir.name),
        release_blocking=blocking is True or str(blocking).lower() == "true",
        builds=builds,
        rows=rows,
        runs=grid.pairs() if grid is not None else None,
    )


def _parse_builds(paths: list[Path], workers: int, *, encoded: bool) -> list[tuple[ParsedBuild, Encoded | None]]:
    """The builds' files parsed, in order; by several processes when there are many, which hand each parse back
    in the cache's encoding (strings cross a process boundary far faster than objects)."""
    workers = workers or ((os.cpu_count() or 1) if len(paths) >= PARALLEL_FROM else 1)
    size = -(-len(paths) // workers) or 1
    chunks = [paths[i : i + size] for i in range(0, len(paths), size)]
    if len(chunks) <= 1:
        return [(parse_build(path), None) for path in paths]
    with ProcessPoolExecutor(len(chunks)) as pool:
        results = [text for chunk in pool.map(_parse_chunk, chunks) for text in chunk]
    return [(decode(path, text[0], (text[1], text[2]), rows=text[3], stored_evidence=(text[4], text[5])),
             text if encoded else None) for path, text in zip(paths, results, strict=True)]


def _parse_chunk(paths: list[Path]) -> list[Encoded]:
    # A worker process of its own: parsed trees hold no reference cycles, so the collector's passes over the
    # millions of elements they make are pure cost (about a tenth of the parse).
    gc.disable()
    return [encode(parse_build(path)) for path in paths]


def _first(builds: list[Build], key: str) -> object:
    """A job-level fact from the newest build whose metadata has it."""
    return next((build.metadata[key] for build in builds if build.metadata.get(key) not in (None, "")), None)
