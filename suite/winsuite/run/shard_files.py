"""A shard build's files where they are, and where each goes in the merged build: diagnostics keep their place (rows
link to them), each shard's own files go to artifacts/shards/<NN>/, its JUnit files nowhere (their rows are merged, and
TestGrid reads every JUnit file under a build).

A shard build is read where it is, its directory (`winsuite merge`: DirectoryFiles below) or the archive its pod sent
(a run inside the cluster: incluster/received.py), never unpacked somewhere only to be read back.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
from collections.abc import Callable
from collections.abc import Iterable
from pathlib import Path
from pathlib import PurePosixPath
from typing import Any
from typing import Protocol

from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.results import junit
from winsuite.results.model import Attempt
from winsuite_reports.conventions import ARTIFACTS
from winsuite_reports.conventions import BUILD_LOG
from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import METADATA
from winsuite_reports.conventions import STARTED
from winsuite_reports.junit import MalformedJunit
from winsuite_reports.junit import is_junit
from winsuite_reports.prow import MalformedJson
from winsuite_reports.prow import read_json_object

SHARDS_DIR = "shards"  # artifacts/shards/<NN>/: each shard's own started/finished/metadata, build log, node logs
_OWN_FILES = (STARTED, FINISHED, BUILD_LOG)  # of the build directory: what the merged build has one of its own
# Under artifacts/: the files the merged build has one of its own (or that only the shard's run needed), and the
# directories every shard has by the same name.
_RUN_FILES = ("winsuite-events_", "winsuite-durations.json", "winsuite-interrupt-reason.txt", METADATA)
_PER_SHARD_DIRS = ("nodes", "cluster", SHARDS_DIR)

# A file of a shard's build (its path in the build) and how to write it to a path of the merged build.
Entry = tuple[PurePosixPath, Callable[[Path], None]]


class ShardFiles(Protocol):
    """A shard build's files, read where they are."""

    @property
    def where(self) -> str:
        """What messages call the build."""

    @property
    def directory(self) -> Path | None:
        """Its directory, when it has one the merged build can name."""

    def read(self, relative: str) -> bytes | None:
        """A file of the build, by its path in it; None when it has none."""

    def json(self, name: str) -> dict[str, Any] | None:
        """A JSON object file at the build's top (started.json, finished.json); None when it has none."""

    def junit(self) -> dict[str, list[Attempt]]:
        """The rows of each of its JUnit files, by file name."""

    def place(self, shard: int, build_dir: Path) -> None:
        """Each of its files with a destination written there, in the merged build `build_dir`."""


@dataclasses.dataclass(frozen=True)
class Destination:
    path: PurePosixPath  # relative to the merged build's directory
    shared: bool = False  # one file for every shard (discovery.json): the first shard's stands for the run


def own_dir(shard: int) -> PurePosixPath:
    return PurePosixPath(ARTIFACTS, SHARDS_DIR, f"{shard:02d}")


def destination(relative: PurePosixPath, shard: int) -> Destination | None:
    """Where the file `relative` of shard number `shard`'s build goes in the merged build; None: nowhere."""
    parts = relative.parts
    if len(parts) == 1:
        return Destination(own_dir(shard) / parts[0]) if parts[0] in _OWN_FILES else None
    if parts[0] != ARTIFACTS:
        return None
    name = parts[1]
    if len(parts) == 2:
        if is_junit(name):
            return None
        return Destination(own_dir(shard) / name) if name.startswith(_RUN_FILES) else Destination(relative, True)
    return Destination(own_dir(shard).joinpath(*parts[1:])) if name in _PER_SHARD_DIRS else Destination(relative)


def place(entries: Iterable[Entry], shard: int, build_dir: Path) -> None:
    """Each file with a destination written there; a shared file only by the first shard that has it."""
    for relative, write in entries:
        where = destination(relative, shard)
        if where is None:
            continue
        target = build_dir / where.path
        if where.shared and target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        write(target)


class DirectoryFiles:
    """A shard build in its directory (`winsuite run --shard I/N`'s), read with the reports' own guarded readers."""

    def __init__(self, directory: Path) -> None:
        self.directory: Path | None = directory
        self.where = str(directory)
        self._path = directory

    def read(self, relative: str) -> bytes | None:
        path = self._path / relative
        return path.read_bytes() if path.is_file() else None

    def json(self, name: str) -> dict[str, Any] | None:
        try:
            return read_json_object(self._path / name)
        except FileNotFoundError:
            return None
        except OSError as err:
            raise UsageError(f"cannot read {self._path / name}: {err.strerror or err}") from None
        except MalformedJson as err:
            raise DataError(self._path, name, str(err)) from None

    def junit(self) -> dict[str, list[Attempt]]:
        artifacts = self._path / ARTIFACTS
        phases: dict[str, list[Attempt]] = {}
        for path in sorted(artifacts.glob("*.xml")) if artifacts.is_dir() else []:
            if is_junit(path.name):
                try:
                    phases[path.name] = junit.read(path)
                except (MalformedJunit, OSError) as err:
                    raise DataError(path, "", f"not JUnit winsuite can merge: {err}") from None
        return phases

    def place(self, shard: int, build_dir: Path) -> None:
        """Links are not followed, nor copied: they point at what is not the build's."""
        entries: list[Entry] = []
        for directory, _, names in os.walk(self._path):
            for name in sorted(names):
                path = Path(directory, name)
                if path.is_file() and not path.is_symlink():
                    entries.append((PurePosixPath(path.relative_to(self._path).as_posix()),
                                    functools.partial(_copy, path)))
        place(entries, shard, build_dir)


def _copy(source: Path, target: Path) -> None:
    shutil.copy2(source, target)
