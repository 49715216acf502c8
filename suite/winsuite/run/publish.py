"""`winsuite publish`: a build uploaded in prow's layout (DEST/<job>/<build>/…) to gs://, s3:// or a directory, and
the job's latest-build.txt moved to it, so CI outside prow feeds the bucket TestGrid and `winsuite report` read.

The order makes it resumable and safe to repeat: started.json first (it claims the build id), the artifacts, then
finished.json (a reader takes a build with finished.json as complete, as prow's uploader writes it last), then
latest-build.txt. A retry uploads only the files the destination does not hold as they are; a build id the
destination holds for another build (its started.json differs) is refused, never overwritten.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from winsuite.errors import UsageError
from winsuite_reports.cache import CACHE_FILE
from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import LATEST_BUILD
from winsuite_reports.conventions import STARTED
from winsuite_reports.results import is_build
from winsuite_reports.results import natural_key
from winsuite_reports.store import ObjectStore
from winsuite_reports.store import StoredObject
from winsuite_reports.store import is_remote
from winsuite_reports.store import parse_remote
from winsuite_reports.store_dir import DirectoryStore
from winsuite_reports.store_schemes import MissingClient
from winsuite_reports.store_schemes import open_store


@dataclass(frozen=True)
class Published:
    url: str  # where the build now is
    uploaded: int
    already_there: int
    latest: bool  # whether latest-build.txt now names this build


def destination(dest: str) -> tuple[ObjectStore, str, str]:
    """(store, key prefix, printable location) of a publish destination."""
    if not is_remote(dest):
        return DirectoryStore(Path(dest)), "", dest.rstrip("/")
    try:
        root = parse_remote(dest)
        return open_store(root), root.prefix, root.url
    except (ValueError, MissingClient) as err:
        raise UsageError(f"publish: {err}") from None


def publish(build_dir: Path, dest: str, say: Callable[[str], None] = print) -> Published:
    """Upload the build; StoreError when the destination fails, UsageError when it holds another build of that id."""
    if not is_build(build_dir):
        raise UsageError(f"publish: {build_dir}: not a build directory (no {STARTED} or {FINISHED})")
    store, prefix, where = destination(dest)
    job, build = build_dir.resolve().parent.name, build_dir.resolve().name
    job_key = "/".join(part for part in (prefix, job) if part)
    build_key = f"{job_key}/{build}"
    held = {obj.key: obj for obj in store.list_files(build_key)}
    files = _files(build_dir)
    _refuse_another_build(store, held, build_dir, build_key, f"{where}/{job}/{build}")
    ordered = sorted(files, key=lambda rel: (rel != STARTED, rel == FINISHED, rel))
    uploaded = 0
    for number, relative in enumerate(ordered, 1):
        data = (build_dir / relative).read_bytes()
        if not _holds(store, held.get(f"{build_key}/{relative}"), data):
            store.write(f"{build_key}/{relative}", data)
            uploaded += 1
        if number % 100 == 0:
            say(f"winsuite publish: {number}/{len(ordered)} files")
    latest = _move_latest(store, job_key, build)
    return Published(f"{where}/{job}/{build}", uploaded, len(ordered) - uploaded, latest)


def _files(build_dir: Path) -> list[str]:
    """Every regular file of the build, as paths relative to it (a report cache file left there is not the build's)."""
    found = []
    for directory, subdirs, names in os.walk(build_dir):
        subdirs.sort()
        for name in sorted(names):
            path = Path(directory, name)
            if path.is_file() and not path.is_symlink() and name != CACHE_FILE:
                found.append(path.relative_to(build_dir).as_posix())
    return found


def _refuse_another_build(store: ObjectStore, held: dict[str, StoredObject], build_dir: Path, build_key: str,
                          where: str) -> None:
    """A destination that holds this build id for another build: its started.json differs, or it holds files of a
    build without one (this one's started.json is always uploaded first)."""
    started = held.get(f"{build_key}/{STARTED}")
    if started is None:
        if held:
            raise UsageError(f"publish: {where} already holds {len(held)} file(s) but no {STARTED}: not this build; "
                             "nothing overwritten")
        return
    if store.read(started.key) != (build_dir / STARTED).read_bytes():
        raise UsageError(f"publish: {where} holds another build with this id (its {STARTED} differs); nothing "
                         "overwritten: publish under another job or build id")


def _holds(store: ObjectStore, held: StoredObject | None, data: bytes) -> bool:
    """Whether the destination's object is this content: by MD5 where the store gives it, else by size (uploads are
    atomic: an object there is a whole earlier upload)."""
    if held is None:
        return False
    if held.md5:
        return held.md5 == hashlib.md5(data, usedforsecurity=False).hexdigest()
    return held.size == len(data)


def _move_latest(store: ObjectStore, job_key: str, build: str) -> bool:
    """latest-build.txt names this build unless it names a newer one already (a build published late)."""
    key = f"{job_key}/{LATEST_BUILD}"
    current = ""
    if LATEST_BUILD in store.list_level(job_key).files:
        current = store.read(key).decode("utf-8", "replace").strip()
    if current and natural_key(current) > natural_key(build):
        return False
    if current != build:
        store.write(key, build.encode())
    return True
