"""Shard builds of one job made one build: every shard's rows per phase, SUCCESS only when every shard passed.

What `winsuite merge BUILD_DIR…` does for a CI matrix of `winsuite run --shard I/N`, and what a run inside the cluster
does with the builds of its shard pods. A test in two shard builds is refused (the shards were cut from different
plans, or one build was given twice); a test's flake attempts, all from its one shard, are kept as rows.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.policy.shards import ShardRef
from winsuite.results import junit
from winsuite.results import prow
from winsuite.results.merge import engine_of
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite_reports.conventions import BUILD_LOG
from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import METADATA
from winsuite_reports.conventions import STARTED
from winsuite_reports.conventions import artifacts_dir
from winsuite_reports.junit import MalformedJunit
from winsuite_reports.junit import is_junit
from winsuite_reports.prow import MalformedJson
from winsuite_reports.prow import read_json_object

SHARDS_DIR = "shards"  # artifacts/shards/<NN>/: each shard's own started/finished/metadata, build log, node logs
# A shard's files the merged build has one of its own (or that only the shard's run needed).
_RUN_FILES = ("winsuite-events_", "winsuite-durations.json", "winsuite-interrupt-reason.txt", METADATA)
_PER_SHARD_DIRS = ("nodes", "cluster", SHARDS_DIR)  # the same names in every shard: kept apart under shards/<NN>/


@dataclasses.dataclass
class ShardBuild:
    directory: Path
    shard: ShardRef
    started: dict[str, Any]
    finished: dict[str, Any] | None  # None: the shard never finished
    phases: dict[str, list[Attempt]]  # JUnit file name -> its rows

    @property
    def metadata(self) -> dict[str, Any]:
        value = self.started.get("metadata")
        return value if isinstance(value, dict) else {}

    @property
    def result(self) -> str:
        if self.finished is None:
            return "FAILURE"
        result = self.finished.get("result")
        return result if result in prow.RESULTS else "FAILURE"

    @property
    def attempts(self) -> list[Attempt]:
        return [row for rows in self.phases.values() for row in rows]

    @property
    def cut_off(self) -> bool:
        """Something stopped the shard's run before it ended by itself: it ended ABORTED (a signal), never
        finished, or a row of it is interrupted."""
        return (self.finished is None or self.result == "ABORTED"
                or any(row.outcome is Outcome.INTERRUPTED for row in self.attempts))


def _json(directory: Path, name: str, *, required: bool) -> dict[str, Any] | None:
    try:
        return read_json_object(directory / name)
    except FileNotFoundError:
        if required:
            raise UsageError(f"{directory}: not a build directory (no {name})") from None
        return None
    except OSError as err:
        raise UsageError(f"cannot read {directory / name}: {err.strerror or err}") from None
    except MalformedJson as err:
        raise DataError(directory, name, str(err)) from None


def read_shard_build(directory: Path) -> ShardBuild:
    started = _json(directory, STARTED, required=True)
    assert started is not None
    metadata = started.get("metadata")
    ref = metadata.get(prow.SHARD_METADATA) if isinstance(metadata, dict) else None
    if not isinstance(ref, str):
        raise DataError(directory, f"{STARTED}: metadata.shard",
                        "not a shard build (made by `winsuite run --shard I/N`)")
    try:
        shard = ShardRef.parse(ref)
    except UsageError as err:
        raise DataError(directory, f"{STARTED}: metadata.shard", str(err)) from None
    phases: dict[str, list[Attempt]] = {}
    artifacts = artifacts_dir(directory)
    for path in sorted(artifacts.glob("*.xml")) if artifacts.is_dir() else []:
        if is_junit(path.name):
            try:
                phases[path.name] = junit.read(path)
            except (MalformedJunit, OSError) as err:
                raise DataError(path, "", f"not JUnit winsuite can merge: {err}") from None
    return ShardBuild(directory, shard, started, _json(directory, FINISHED, required=False), phases)


def check_shards(builds: Sequence[ShardBuild]) -> None:
    """One job, one count, each shard once, no test in two shards: else a UsageError naming what is wrong."""
    if not builds:
        raise UsageError("merge needs at least one shard build")
    jobs = sorted({str(b.metadata.get("job")) for b in builds})
    if len(jobs) > 1:
        raise UsageError(f"the shard builds are of different jobs ({', '.join(jobs)}); merge the shards of one job")
    counts = sorted({b.shard.count for b in builds})
    if len(counts) > 1:
        raise UsageError(f"the shard builds were cut into different numbers of shards ({counts})")
    where: dict[int, Path] = {}
    for build in builds:
        if build.shard.number in where:
            raise UsageError(f"shard {build.shard} given twice: {where[build.shard.number]} and {build.directory}")
        where[build.shard.number] = build.directory
    missing = [f"{n}/{counts[0]}" for n in range(1, counts[0] + 1) if n not in where]
    if missing:
        raise UsageError(f"shard(s) {', '.join(missing)} missing: every shard's build is needed for one build")
    owner: dict[tuple[str, str], Path] = {}
    for build in builds:
        for key in dict.fromkeys((a.name, engine_of(a)) for a in build.attempts):
            if key in owner:
                raise UsageError(f"duplicate rows: {key[0]!r} is in shard builds {owner[key]} and {build.directory} "
                                 "(shards cut from different plans, or one build given twice)")
            owner[key] = build.directory


def merged_result(builds: Sequence[ShardBuild]) -> str:
    results = {b.result for b in builds}
    return "ABORTED" if "ABORTED" in results else "FAILURE" if "FAILURE" in results else "SUCCESS"


def write_merged(builds: Sequence[ShardBuild], build_dir: Path, *, metadata: dict[str, Any] | None = None,
                 started: float | None = None, result: str | None = None,
                 shard_dirs_kept: bool = True) -> list[Attempt]:
    """The merged build in `build_dir` (with `metadata` added, its start and result when given); its rows.
    `check_shards` first. Without `shard_dirs_kept` (shard builds unpacked in a scratch directory) the metadata
    does not name the shard builds' directories."""
    builds = sorted(builds, key=lambda b: b.shard.number)
    artifacts = artifacts_dir(build_dir)
    artifacts.mkdir(parents=True, exist_ok=True)
    for build in builds:
        _copy_artifacts(build, artifacts)
    phases = sorted({name for build in builds for name in build.phases})
    rows: list[Attempt] = []
    for name in phases:
        phase_rows = [row for build in builds for row in build.phases.get(name, [])]
        junit.write(artifacts / name, phase_rows)
        rows += phase_rows
    first = builds[0]
    extra = metadata or {}
    metadata = {k: v for k, v in first.metadata.items() if k != prow.SHARD_METADATA}
    metadata["shards"] = [_shard_entry(b, build_dir, shard_dirs_kept) for b in builds]
    metadata.update(extra)
    timestamps = [t for b in builds if isinstance(t := b.started.get("timestamp"), int | float)]
    prow.write_started(build_dir, started or min(timestamps, default=time.time()), metadata)
    finished = dict(first.finished.get("metadata") or {}) if first.finished else {}
    finished = {k: v for k, v in finished.items() if k not in (prow.SHARD_METADATA, "interrupted", "error")}
    finished.update(metadata)
    not_passed = [f"{b.shard}: {_why(b)}" for b in builds if b.result != "SUCCESS"]
    if not_passed:
        finished["shards-not-passed"] = not_passed
    result = result or merged_result(builds)
    prow.write_finished(build_dir, passed=result == "SUCCESS", result=result, metadata=finished)
    return rows


def _why(build: ShardBuild) -> str:
    if build.finished is None:
        return "did not finish"
    metadata = build.finished.get("metadata")
    detail = metadata.get("interrupted") or metadata.get("error") if isinstance(metadata, dict) else None
    return f"{build.result}" + (f" ({detail})" if detail else "")


def _shard_entry(build: ShardBuild, build_dir: Path, with_directory: bool) -> dict[str, str]:
    entry = {"shard": str(build.shard), "result": build.result}
    if with_directory:
        entry["build"] = str(build.directory)
    entry["files"] = f"{artifacts_dir(build_dir).relative_to(build_dir)}/{SHARDS_DIR}/{build.shard.number:02d}/"
    return entry


def _copy_artifacts(build: ShardBuild, artifacts: Path) -> None:
    """Diagnostics keep their place (rows link to them); each shard's own files go to shards/<NN>/."""
    own = artifacts / SHARDS_DIR / f"{build.shard.number:02d}"
    own.mkdir(parents=True, exist_ok=True)
    for name in (STARTED, FINISHED, BUILD_LOG):
        if (build.directory / name).is_file():
            shutil.copy2(build.directory / name, own / name)
    source = artifacts_dir(build.directory)
    if not source.is_dir():
        return
    for path in sorted(source.iterdir()):
        if path.is_symlink() or (path.is_file() and is_junit(path.name)):
            continue
        if path.is_dir():
            target = own / path.name if path.name in _PER_SHARD_DIRS else artifacts / path.name
            shutil.copytree(path, target, symlinks=True, dirs_exist_ok=True)
        elif path.name.startswith(_RUN_FILES):
            shutil.copy2(path, own / path.name)
        elif not (artifacts / path.name).exists():  # discovery.json: the first shard's stands for the run
            shutil.copy2(path, artifacts / path.name)
