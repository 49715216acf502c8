"""Each build's parsed files kept in one SQLite file at the results root, so that a report over a long history
parses only the builds whose files changed since the last report.

A build's entry is keyed by its path under the root and checked against a fingerprint of its files (the path, size
and modification time of started.json, finished.json, metadata.json and every JUnit file) and of the parser's own
source: a build rewritten, a JUnit file added and a new winsuite all miss the cache. The cache only ever saves time:
a root that cannot be written, a corrupt or foreign cache file, or an entry that does not decode are read from the
files as if there were no cache, and give the same dashboard byte for byte.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from pathlib import Path

from winsuite_reports import build_codec
from winsuite_reports import evidence
from winsuite_reports import flakiness
from winsuite_reports import junit
from winsuite_reports import prow
from winsuite_reports import split
from winsuite_reports import triage
from winsuite_reports.build_codec import UNDECODABLE
from winsuite_reports.build_codec import Encoded
from winsuite_reports.build_codec import decode
from winsuite_reports.build_codec import dumps
from winsuite_reports.prow import ParsedBuild

CACHE_FILE = ".winsuite-report-cache.sqlite"
SCHEMA = 6  # PRAGMA user_version of the file; another number means another layout: the file is made anew
LOCK_SECONDS = 5.0  # another report writing the cache at the same time waits this long, then goes without it
_SCHEMA_SQL = (
    "CREATE TABLE IF NOT EXISTS builds (path TEXT PRIMARY KEY, fingerprint TEXT NOT NULL,"
    " header TEXT NOT NULL, passes TEXT NOT NULL, cells TEXT NOT NULL, rows TEXT NOT NULL);"
    # A job's grid and row facts, valid for the builds (path and fingerprint, newest first) it lists.
    "CREATE TABLE IF NOT EXISTS jobs (path TEXT PRIMARY KEY, builds TEXT NOT NULL, rows TEXT NOT NULL,"
    " cells TEXT NOT NULL, runs BLOB NOT NULL);"
    # A remote root's objects as its local mirror holds them: key -> generation (GCS) or ETag (S3).
    "CREATE TABLE IF NOT EXISTS objects (key TEXT PRIMARY KEY, version TEXT NOT NULL);"
    # A build's failures and where its rows ran (reports.evidence), beside its entry in builds.
    "CREATE TABLE IF NOT EXISTS evidence (path TEXT PRIMARY KEY, failures TEXT NOT NULL, ran_on TEXT NOT NULL);"
    # What a report derives from a job's builds besides its grid (reports.failures, reports.placement), by kind,
    # valid for the builds (path and fingerprint, newest first) it lists.
    "CREATE TABLE IF NOT EXISTS derived (path TEXT NOT NULL, kind TEXT NOT NULL, builds TEXT NOT NULL,"
    " state TEXT NOT NULL, PRIMARY KEY (path, kind))"
)


def _parser_version() -> str:
    """The source of the modules whose output the cache stores: changing how builds are read empties it."""
    digest = hashlib.blake2b(digest_size=8)
    for module in (junit, prow, evidence, triage, flakiness, build_codec):
        digest.update(Path(module.__file__ or "").read_bytes())
    digest.update(str(SCHEMA).encode())
    return digest.hexdigest()


def fingerprint(build_dir: Path) -> str:
    """What a build's entry is valid for: its result files as they are now (size, modification time, mode), and
    the parser that read them."""
    digest = hashlib.blake2b(_PARSER_VERSION.encode(), digest_size=16)
    digest.update("".join(map(_file_line, prow.result_files(str(build_dir)))).encode())
    return digest.hexdigest()


@contextlib.contextmanager
def fingerprints(build_dirs: Sequence[Path], *, beside: bool = False) -> Iterator[Callable[[], list[str]]]:
    """What gives the fingerprint of each of `build_dirs`; with `beside`, they are taken by a forked copy of the
    process (reports.split) while the caller does something else: a long history's fingerprints are thousands of
    stat calls, about as long as parsing a build."""
    def taken() -> bytes:
        return "\n".join(map(fingerprint, build_dirs)).encode()

    with split.Beside(taken, split=beside and bool(build_dirs)) as copy:
        yield lambda: copy.result().decode().split("\n") if build_dirs else []


def _file_line(found: tuple[str, os.DirEntry[str]]) -> str:
    name, entry = found
    try:
        info = entry.stat()
    except OSError:
        return f"{name}:unreadable\n"
    return f"{name}:{info.st_size}:{info.st_mtime_ns}:{info.st_mode}\n"


class BuildCache:
    """The cache of one results root; every failure of the cache file makes it a cache that holds nothing."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._prefix = os.path.join(str(root), "")  # a path under the root starts with this
        self._db = _open(root / CACHE_FILE)
        self._stored: dict[str, list[str]] | None = None
        self.hits = self.misses = 0

    def __enter__(self) -> BuildCache:
        return self

    def __exit__(self, *_: object) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    def holds(self, build_dir: Path) -> bool:
        """Whether the cache has an entry for `build_dir` (of whichever fingerprint)."""
        return self._key(build_dir) in self._entries()

    def get(self, build_dir: Path, print_: str) -> ParsedBuild | None:
        """The stored parse of `build_dir` when its fingerprint is still `print_`."""
        key = self._key(build_dir)
        found = self._entries().get(key)
        if found and found[0] == print_:
            try:
                parsed = decode(build_dir, found[1], lambda: self._stored_cells(key, print_),
                                rows=lambda: self._stored_rows(key, print_),
                                stored_evidence=lambda: self._stored_evidence(key, print_))
            except UNDECODABLE:
                parsed = None
            if parsed is not None:
                self.hits += 1
                return parsed
        self.misses += 1
        return None

    def _entries(self) -> dict[str, list[str]]:
        """Every entry's fingerprint and header, by key, read in one query; cells and row facts are read when asked
        for (a job's stored grid holds its older builds' cells: most are never read)."""
        if self._stored is None:
            self._stored = {path: entry for path, *entry in self._query(
                "SELECT path, fingerprint, header FROM builds", ())}
        return self._stored

    def put(self, entries: Iterable[tuple[Path, str, Encoded]]) -> None:
        """Store fresh parses (one transaction); a cache that cannot be written is left as it is."""
        listed = [(self._key(path), print_, encoded) for path, print_, encoded in entries]
        self._write("INSERT OR REPLACE INTO builds VALUES (?, ?, ?, ?, ?, ?)",
                    [(key, print_, *encoded[:4]) for key, print_, encoded in listed])
        self._write("INSERT OR REPLACE INTO evidence VALUES (?, ?, ?)",
                    [(key, *encoded[4:]) for key, _, encoded in listed])

    def get_job(self, job_dir: Path) -> tuple[list[tuple[str, str]], str, tuple[str, bytes]] | None:
        """A job's stored (build path, fingerprint) list, newest first, with the row facts and the grid (cells and
        runs, see reports.job_grid) made of those builds; None when there is none or it does not decode."""
        found = self._query("SELECT builds, rows, cells, runs FROM jobs WHERE path = ?", (self._key(job_dir),))
        builds = _builds_listed(found[0][0]) if found else None
        if builds is None or not isinstance(found[0][3], bytes):
            return None
        return builds, found[0][1], (found[0][2], found[0][3])

    def put_job(self, job_dir: Path, builds: list[tuple[str, str]], rows: str, grid: tuple[str, bytes]) -> None:
        """Store a job's grid and row facts with the (build key, fingerprint) list they were made of."""
        self._write("INSERT OR REPLACE INTO jobs VALUES (?, ?, ?, ?, ?)",
                    [(self._key(job_dir), dumps(builds), rows, *grid)])

    def get_derived(self, job_dir: Path, kind: str) -> tuple[list[tuple[str, str]], str] | None:
        """What a report derived of `kind` from a job's builds, with the (build key, fingerprint) list, newest first,
        it was made of; None when there is none or it does not decode."""
        found = self._query("SELECT builds, state FROM derived WHERE path = ? AND kind = ?", (self._key(job_dir), kind))
        builds = _builds_listed(found[0][0]) if found else None
        return None if builds is None else (builds, found[0][1])

    def put_derived(self, job_dir: Path, kind: str, builds: list[tuple[str, str]], state: str) -> None:
        self._write("INSERT OR REPLACE INTO derived VALUES (?, ?, ?, ?)", [(self._key(job_dir), kind, dumps(builds),
                                                                            state)])

    def key(self, path: Path) -> str:
        """A build's or job's path as the cache names it: relative to the results root."""
        return self._key(path)

    def _write(self, sql: str, rows: Sequence[tuple[str | bytes, ...]]) -> None:
        if self._db is None:
            return
        try:
            with self._db:
                self._db.executemany(sql, rows)
        except sqlite3.Error as err:
            self._give_up(err)

    def forget_others(self, job_dir: Path, keep: Iterable[Path]) -> None:
        """Drop the entries of `job_dir`'s builds that are gone from the disk."""
        if self._db is None:
            return
        prefix = self._key(job_dir)
        kept = {self._key(path) for path in keep}
        stored = self._query("SELECT path FROM builds WHERE substr(path, 1, ?) = ?", (len(prefix) + 1, prefix + "/"))
        gone = [(path,) for (path,) in stored if path not in kept]
        if gone:
            self._write("DELETE FROM builds WHERE path = ?", gone)
            self._write("DELETE FROM evidence WHERE path = ?", gone)

    def forget_jobs_other_than(self, job_dirs: Iterable[Path]) -> None:
        """Drop the entries of jobs (and their builds) whose directories are gone from the results root."""
        kept = {self._key(path) for path in job_dirs}
        gone_jobs = [(path,) for (path,) in self._query("SELECT path FROM jobs", ()) if path not in kept]
        gone_builds = [(path,) for (path,) in self._query("SELECT path FROM builds", ())
                       if path.partition("/")[0] not in kept]
        if gone_jobs:
            self._write("DELETE FROM jobs WHERE path = ?", gone_jobs)
            self._write("DELETE FROM derived WHERE path = ?", gone_jobs)
        if gone_builds:
            self._write("DELETE FROM builds WHERE path = ?", gone_builds)
            self._write("DELETE FROM evidence WHERE path = ?", gone_builds)

    def object_versions(self) -> dict[str, str]:
        """Every remote object the mirror holds, with the generation or ETag it was fetched at."""
        return dict(self._query("SELECT key, version FROM objects", ()))  # type: ignore[arg-type]  # (str, str)

    def put_objects(self, objects: Iterable[tuple[str, str]]) -> None:
        self._write("INSERT OR REPLACE INTO objects VALUES (?, ?)", list(objects))

    def forget_objects(self, keys: Iterable[str]) -> None:
        self._write("DELETE FROM objects WHERE key = ?", [(key,) for key in keys])

    def _stored_cells(self, key: str, print_: str) -> tuple[str, str] | None:
        """The stored passes and other cells of one build; None when gone (read from the files then)."""
        found = self._read_later("SELECT passes, cells FROM builds WHERE path = ? AND fingerprint = ?", key, print_)
        return (found[0], found[1]) if found else None

    def _stored_rows(self, key: str, print_: str) -> str:
        """The stored row facts of one build ("" when gone: read from the files then)."""
        found = self._read_later("SELECT rows FROM builds WHERE path = ? AND fingerprint = ?", key, print_)
        return found[0] if found else ""

    def _stored_evidence(self, key: str, print_: str) -> tuple[str, str] | None:
        """The stored failures and ran-on of one build; None when there are none (read from the files then)."""
        found = self._read_later("SELECT e.failures, e.ran_on FROM evidence e JOIN builds b ON b.path = e.path"
                                 " WHERE e.path = ? AND b.fingerprint = ?", key, print_)
        return (found[0], found[1]) if found else None

    def _read_later(self, sql: str, key: str, print_: str) -> tuple[str, ...] | None:
        """A part of a build's entry read when first asked for, while the entry is still the one get() checked:
        through the open file, or once the cache is closed (a report analyses after it has loaded) through a
        read-only connection of its own."""
        if self._db is not None:
            found = self._query(sql, (key, print_))
        else:
            found = _read_only(self.root / CACHE_FILE, sql, (key, print_))
        return found[0] if found else None

    def _key(self, path: Path) -> str:
        text = str(path)
        if text.startswith(self._prefix) and ".." not in text:  # under the root as given (every build and job is)
            return text[len(self._prefix):]
        relative = os.path.relpath(path, self.root)
        return "" if relative == "." else relative

    def _query(self, sql: str, args: tuple[object, ...]) -> list[tuple[str, ...]]:
        if self._db is None:
            return []
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as err:
            self._give_up(err)
            return []

    def _give_up(self, err: sqlite3.Error) -> None:
        """Go on without the cache; a file SQLite finds corrupt is removed, so the next report makes it anew (a
        locked or read-only one is left as it is)."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db = None
        if not isinstance(err, sqlite3.OperationalError):
            with contextlib.suppress(OSError):
                (self.root / CACHE_FILE).unlink()


def _builds_listed(text: str) -> list[tuple[str, str]] | None:
    """A stored (build key, fingerprint) list; None when the text is not one."""
    try:
        return [(str(path), str(print_)) for path, print_ in json.loads(text)]
    except UNDECODABLE:
        return None


def new_since(listed: list[tuple[str, str]], stored: list[tuple[str, str]]) -> int | None:
    """How many of the listed builds (key, fingerprint; newest first) are new in front of the stored ones; None when
    the stored builds are not the listed ones past those (the oldest may be gone: a build rewritten or removed in
    between means None)."""
    if not stored or stored[0] not in listed:
        return None
    new = listed.index(stored[0])
    return new if listed[new:] == stored[: len(listed) - new] else None


def _read_only(path: Path, sql: str, args: tuple[object, ...]) -> list[tuple[str, ...]]:
    """One query of the cache file through a read-only connection that is closed after it; [] when it fails."""
    try:
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                                                timeout=LOCK_SECONDS)) as db:
            return db.execute(sql, args).fetchall()
    except sqlite3.Error:
        return []


def _open(path: Path) -> sqlite3.Connection | None:
    """The cache file, made or remade when missing, corrupt or of another layout; None when that is not possible."""
    for attempt in range(2):
        db = None
        try:
            if path.exists() and not path.is_file():
                return None
            db = sqlite3.connect(path, timeout=LOCK_SECONDS, isolation_level="DEFERRED")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA):
                raise sqlite3.DatabaseError(f"schema {version}")
            db.execute("PRAGMA synchronous = OFF")  # a cache: no fsync; a file a crash left corrupt is made anew
            db.executescript(_SCHEMA_SQL)
            db.execute(f"PRAGMA user_version = {SCHEMA}")
            db.commit()
            return db
        except sqlite3.Error:
            if db is not None:
                db.close()
            if attempt or not path.is_file():
                return None
            with contextlib.suppress(OSError):
                path.unlink()  # not a cache this code can use: made anew
    return None


_PARSER_VERSION = _parser_version()
