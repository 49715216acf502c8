"""A directory as an object store (keys are paths under it): `winsuite publish` to a directory takes the same steps
as to a bucket."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from winsuite_reports.store import Level
from winsuite_reports.store import StoredObject
from winsuite_reports.store import StoreError
from winsuite_reports.store import StoreFailure


class DirectoryStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def list_level(self, prefix: str) -> Level:
        base = self.root / prefix
        if not base.is_dir():
            return Level([], [])
        entries = sorted(base.iterdir())
        return Level([p.name for p in entries if p.is_dir()], [p.name for p in entries if p.is_file()])

    def list_files(self, prefix: str) -> list[StoredObject]:
        base = self.root / prefix
        found = []
        for directory, subdirs, files in os.walk(base):
            subdirs.sort()
            for name in sorted(files):
                path = Path(directory, name)
                info = path.stat()
                key = path.relative_to(self.root).as_posix()
                found.append(StoredObject(key, f"{info.st_mtime_ns}:{info.st_size}", info.st_size, _md5(path)))
        return found

    def read(self, key: str) -> bytes:
        try:
            return (self.root / key).read_bytes()
        except FileNotFoundError as err:
            raise StoreError(StoreFailure.OBJECT_GONE, f"read {self.root / key}: no such file") from err

    def write(self, key: str, data: bytes) -> None:
        path = self.root / key
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            scratch = path.with_name(f".{path.name}.{os.getpid()}.partial")
            scratch.write_bytes(data)
            os.replace(scratch, path)  # never a half-written file under the final name
        except PermissionError as err:
            raise StoreError(StoreFailure.ACCESS_DENIED, f"write {path}: {err.strerror}") from err

    def link(self, key: str) -> str:
        return (self.root / key).as_posix()


def _md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
