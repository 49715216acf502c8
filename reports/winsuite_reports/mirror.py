"""A remote results root (a bucket prefix: a root of jobs, one job, or one build) mirrored into a local directory,
from which the dashboard is made exactly as from a tree on disk.

Only the files the dashboard reads are fetched: started.json, finished.json, artifacts/metadata.json and the JUnit
files. The mirror's cache file remembers each object's generation (GCS) or ETag (S3): an object is fetched again
only when that changed, and a build whose finished.json is held is not even listed again (prow writes finished.json
last), so a report after one new build lists each job once and fetches that build's objects only. A build that
could not be read whole is left out (and named); a store that fails as a whole (missing, denied, unreachable,
throttled) is asked nothing more, and the builds read until then still render.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import os
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TypeVar

from winsuite_reports.cache import BuildCache
from winsuite_reports.conventions import ARTIFACTS
from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import LATEST_BUILD
from winsuite_reports.conventions import METADATA
from winsuite_reports.conventions import STARTED
from winsuite_reports.junit import is_junit
from winsuite_reports.results import natural_key
from winsuite_reports.results import started_since
from winsuite_reports.store import ObjectStore
from winsuite_reports.store import RemoteRoot
from winsuite_reports.store import StoredObject
from winsuite_reports.store import StoreError
from winsuite_reports.store import StoreFailure

WORKERS = 8  # builds fetched at once
MARKERS = (STARTED, FINISHED)
FIXED_FILES = (STARTED, FINISHED, f"{ARTIFACTS}/{METADATA}")
PROGRESS_SECONDS = 2.0  # a long fetch says how far it is at most this often
_T = TypeVar("_T")


class Kind(enum.Enum):
    """What a remote prefix holds."""

    ROOT = "root"  # <job>/<build>/…
    JOB = "job"  # <build>/…
    BUILD = "build"  # started.json …


@dataclass(frozen=True)
class Unread:
    """A build (or, with build "", a job's listing) that could not be read, and why."""

    job: str
    build: str
    failure: StoreFailure
    detail: str


@dataclass
class Mirrored:
    """The outcome of a sync: the local directory to read, and what could not be read."""

    path: Path
    kind: Kind
    unread: list[Unread] = field(default_factory=list)

    def failures(self) -> list[StoreFailure]:
        return list(dict.fromkeys(unread.failure for unread in self.unread))


def wanted(relative: str) -> bool:
    """Whether the dashboard reads this file of a build (a path relative to the build)."""
    return relative in FIXED_FILES or is_junit(relative.rpartition("/")[2])


def mirror_dir(cache: Path, root: RemoteRoot, endpoint: str) -> Path:
    """Where a remote root's mirror lives under the cache: one directory per bucket and prefix at one endpoint (two
    servers may have buckets of the same name)."""
    digest = hashlib.sha256(f"{endpoint}\0{root.prefix}".encode()).hexdigest()[:12]
    return cache / f"{root.scheme}-{root.bucket}-{digest}"


class Mirror:
    def __init__(self, store: ObjectStore, root: RemoteRoot, base: Path, *, workers: int = WORKERS,
                 progress: Callable[[str], None] | None = None) -> None:
        self.store, self.root, self.base = store, root, base
        self.workers = workers
        self.progress = progress
        self._stopped: StoreError | None = None  # the failure that stopped every further request
        self._lock = threading.Lock()
        self._result = Mirrored(base, Kind.ROOT)
        self._levels: dict[str, _Level] = {}
        self._last_said = time.monotonic()  # a short sync says nothing

    def sync(self, *, max_builds: int = 0, since: float | None = None) -> Mirrored:
        """Bring the mirror up to date with the store; raises StoreError when not even the prefix can be listed."""
        self.base.mkdir(parents=True, exist_ok=True)
        kind, top = self._kind()
        name = self.root.prefix.rpartition("/")[2] or self.root.bucket
        with BuildCache(self.base) as cache:
            versions = cache.object_versions()
            if kind is Kind.BUILD:
                job, build = self._job_and_build()
                path = self.base / job / build
                self._result = Mirrored(path, kind)
                self._sync_job(cache, versions, self.root.prefix.rpartition("/")[0], path.parent, [build], 0, None)
            elif kind is Kind.JOB:
                self._result = Mirrored(self.base / name, kind)
                self._sync_job(cache, versions, self.root.prefix, self.base / name, top.dirs, max_builds, since)
            else:
                self._result = Mirrored(self.base / name, kind)
                local = self.base / name
                self._remove_unlisted(cache, versions, local, set(top.dirs), self.root.prefix)
                for job in top.dirs:
                    self._sync_listed_job(cache, versions, self.root.key(job), local / job, max_builds, since)
        return self._result

    # -- what the prefix is --------------------------------------------------------------------------------------
    def _kind(self) -> tuple[Kind, _Level]:
        top = self._list_level(self.root.prefix)
        if any(marker in top.files for marker in MARKERS):
            return Kind.BUILD, top
        if LATEST_BUILD in top.files:
            return Kind.JOB, top
        for child in sorted(top.dirs, key=natural_key, reverse=True)[:3]:
            files = self._list_level(self.root.key(child)).files
            if LATEST_BUILD in files:  # a job: the prefix is a root of jobs
                break
            if any(marker in files for marker in MARKERS):
                return Kind.JOB, top
        return Kind.ROOT, top

    def _job_and_build(self) -> tuple[str, str]:
        parent, _, build = self.root.prefix.rpartition("/")
        return parent.rpartition("/")[2] or self.root.bucket, build

    def _list_level(self, prefix: str) -> _Level:
        """A delimiter listing, made once per sync (telling a root from a job lists a job, which its sync reuses)."""
        found = self._levels.get(prefix)
        if found is None:
            level = self.store.list_level(prefix)
            found = self._levels[prefix] = _Level(level.dirs, level.files)
        return found

    # -- one job -------------------------------------------------------------------------------------------------
    def _sync_listed_job(self, cache: BuildCache, versions: dict[str, str], key: str, local: Path,
                         max_builds: int, since: float | None) -> None:
        if self._stopped is not None:
            self._note(Unread(local.name, "", self._stopped.failure, "not listed: " + self._stopped.detail))
            return
        try:
            builds = self._list_level(key).dirs
        except StoreError as err:
            self._stop_on(err)
            self._note(Unread(local.name, "", err.failure, f"not listed: {err.detail}"))
            return
        self._sync_job(cache, versions, key, local, builds, max_builds, since)

    def _sync_job(self, cache: BuildCache, versions: dict[str, str], key: str, local: Path, builds: list[str],
                  max_builds: int, since: float | None) -> None:
        """Mirror the newest builds of one job (newest `max_builds`, those started at `since` or later)."""
        listed = sorted(builds, key=natural_key, reverse=True)
        if self._result.kind is not Kind.BUILD:
            self._remove_unlisted(cache, versions, local, set(listed), key)
        chosen = listed[: max_builds or None]
        step = self.workers if since is not None else len(chosen) or 1  # --since: stop at the first older batch
        done = 0
        with ThreadPoolExecutor(self.workers) as pool:
            for start in range(0, len(chosen), step):
                batch = chosen[start : start + step]
                outcomes = pool.map(lambda build: self._sync_build(versions, key, local, build), batch)
                for build, outcome in zip(batch, outcomes, strict=True):  # each recorded as soon as it is there
                    self._record(cache, versions, key, local, build, outcome)
                    done += 1
                    self._say(f"{self.root.url}: {local.name}: {done}/{len(chosen)} builds read")
                if since is not None and len(started_since([local / b for b in batch], since)) < len(batch):
                    break

    def _sync_build(self, versions: dict[str, str], job_key: str, local: Path, build: str
                    ) -> list[tuple[StoredObject, bytes | None]] | StoreError:
        """The build's wanted objects, each with its content when it had to be fetched (None: the mirror's copy is
        current); [] for a settled build, which needs no request at all."""
        key = f"{job_key}/{build}"
        if versions.get(f"{key}/{FINISHED}") and (local / build / FINISHED).is_file():
            return []
        try:
            listed = self._checked(lambda: self.store.list_files(key))
            fetched: list[tuple[StoredObject, bytes | None]] = []
            for obj in listed:
                relative = _relative(obj.key, key)
                if relative is None or not wanted(relative):
                    continue
                if versions.get(obj.key) == obj.version and (local / build / relative).is_file():
                    fetched.append((obj, None))
                    continue
                fetched.append((obj, self._checked(functools.partial(self.store.read, obj.key))))
            return fetched
        except StoreError as err:
            return err

    def _checked(self, request: Callable[[], _T]) -> _T:
        """A request, unless the store already failed as a whole (then that failure, at once)."""
        if self._stopped is not None:
            raise self._stopped
        try:
            return request()
        except StoreError as err:
            self._stop_on(err)
            raise

    def _record(self, cache: BuildCache, versions: dict[str, str], job_key: str, local: Path, build: str,
                outcome: list[tuple[StoredObject, bytes | None]] | StoreError) -> None:
        """Write a build's fetched files and their versions (in this thread: the cache is not shared by threads);
        a build that failed is removed from the mirror, to be read whole next time."""
        key = f"{job_key}/{build}"
        build_dir = local / build
        if isinstance(outcome, StoreError):
            _remove(build_dir)
            _forget(cache, versions, key + "/")
            self._note(Unread(local.name, build, outcome.failure, outcome.detail))
            return
        if not outcome:  # settled: nothing changed
            return
        keep = set()
        for obj, data in outcome:
            relative = _relative(obj.key, key) or ""
            keep.add(relative)
            if data is not None:
                _write_atomically(build_dir / relative, data)
        for path in [p for p in build_dir.rglob("*") if p.is_file()] if build_dir.is_dir() else []:
            if path.relative_to(build_dir).as_posix() not in keep:
                path.unlink()
        _forget(cache, versions, key + "/", keep={obj.key for obj, _ in outcome})
        versions.update((obj.key, obj.version) for obj, _ in outcome)
        cache.put_objects((obj.key, obj.version) for obj, _ in outcome)

    def _remove_unlisted(self, cache: BuildCache, versions: dict[str, str], local: Path, listed: set[str],
                         prefix: str) -> None:
        """Drop what the store no longer has (builds or jobs gone), with their recorded versions."""
        if not local.is_dir():
            return
        for path in local.iterdir():
            if path.is_dir() and path.name not in listed:
                _remove(path)
                _forget(cache, versions, "/".join(part for part in (prefix, path.name) if part) + "/")

    # -- bookkeeping ---------------------------------------------------------------------------------------------
    def _stop_on(self, error: StoreError) -> None:
        if error.failure.whole_store:
            with self._lock:
                self._stopped = self._stopped or error

    def _note(self, unread: Unread) -> None:
        with self._lock:
            self._result.unread.append(unread)

    def _say(self, line: str) -> None:
        now = time.monotonic()
        if self.progress is not None and now - self._last_said >= PROGRESS_SECONDS:
            self._last_said = now
            self.progress(line)


@dataclass(frozen=True)
class _Level:
    dirs: list[str]
    files: list[str]


def _relative(key: str, build_key: str) -> str | None:
    """A key's path under its build, or None when it is not one a local directory can hold safely."""
    relative = key[len(build_key) + 1:] if key.startswith(build_key + "/") else ""
    parts = relative.split("/")
    return relative if relative and all(part not in ("", ".", "..") for part in parts) else None


def _forget(cache: BuildCache, versions: dict[str, str], prefix: str, keep: set[str] | frozenset[str] = frozenset()
            ) -> None:
    """Forget the recorded versions of the objects under `prefix` (but those in `keep`)."""
    gone = [key for key in versions if key.startswith(prefix) and key not in keep]
    for key in gone:
        del versions[key]
    if gone:
        cache.forget_objects(gone)


def _remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    scratch.write_bytes(data)
    os.replace(scratch, path)
