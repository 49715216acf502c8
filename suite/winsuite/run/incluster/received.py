"""A shard's build as its pod sent it (protocol.py's tar.gz of its build directory), read in memory: its started and
finished.json and its rows from the archive, its other files written once, straight to their places in the run's build
(shard_files.py)."""

from __future__ import annotations

import functools
import io
import json
import tarfile
from pathlib import Path
from pathlib import PurePosixPath
from typing import Any

from winsuite.errors import DataError
from winsuite.results import junit
from winsuite.results.events import ProtocolError
from winsuite.results.model import Attempt
from winsuite.run.shard_files import place
from winsuite_reports.conventions import ARTIFACTS
from winsuite_reports.junit import MalformedJunit
from winsuite_reports.junit import is_junit


class ArchiveFiles:
    """The files of one received build; a member that is not a file of a build (a device, a path out of it) is a
    ProtocolError, raised before anything is read."""

    def __init__(self, archive: bytes, where: str) -> None:
        self.where = where
        self.directory: Path | None = None  # only the run's build will hold its files
        self._tar = tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz")  # noqa: SIM115  # in memory, read until merged
        self._files: dict[PurePosixPath, tarfile.TarInfo] = {}
        for member in self._tar.getmembers():
            path = PurePosixPath(member.name)
            if not (member.isfile() or member.isdir() or member.issym()) or path.is_absolute() or ".." in path.parts:
                raise ProtocolError(f"the shard's build has {member.name!r}, which is not a file of a build")
            if member.isfile():  # a link is not placed: it would point elsewhere once the files move
                self._files[path] = member

    def read(self, relative: str) -> bytes | None:
        member = self._files.get(PurePosixPath(relative))
        return self._read(member) if member is not None else None

    def json(self, name: str) -> dict[str, Any] | None:
        data = self.read(name)
        if data is None:
            return None
        try:
            value = json.loads(data)
        except ValueError as err:
            raise DataError(self.where, name, f"not JSON: {err}") from None
        if not isinstance(value, dict):
            raise DataError(self.where, name, "not a JSON object")
        return value

    def junit(self) -> dict[str, list[Attempt]]:
        phases: dict[str, list[Attempt]] = {}
        for path, member in sorted(self._files.items()):
            if path.parent == PurePosixPath(ARTIFACTS) and is_junit(path.name):
                try:
                    phases[path.name] = junit.parse(self._read(member), path.name)
                except MalformedJunit as err:
                    raise DataError(self.where, path.name, f"not JUnit winsuite can merge: {err}") from None
        return phases

    def place(self, shard: int, build_dir: Path) -> None:
        place(((path, functools.partial(self._write, member)) for path, member in self._files.items()), shard,
              build_dir)

    def _read(self, member: tarfile.TarInfo) -> bytes:
        handle = self._tar.extractfile(member)
        assert handle is not None  # a regular file's member always has its data
        return handle.read()

    def _write(self, member: tarfile.TarInfo, target: Path) -> None:
        target.write_bytes(self._read(member))
