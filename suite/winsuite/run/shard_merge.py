"""Shard builds of one job made one build: every shard's rows per phase, SUCCESS only when every shard passed.

What `winsuite merge BUILD_DIR…` does for a CI matrix of `winsuite run --shard I/N`, and what a run inside the cluster
does with the builds of its shard pods. A test in two shard builds is refused (the shards were cut from different
plans, or one build was given twice); a test's flake attempts, all from its one shard, are kept as rows.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.policy.shards import ShardRef
from winsuite.results import prow
from winsuite.results.build import Build
from winsuite.results.merge import engine_of
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.results.prow import BuildResult
from winsuite.run.shard_files import ShardFiles
from winsuite.run.shard_files import own_dir
from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import STARTED


@dataclasses.dataclass
class ShardBuild:
    shard: ShardRef
    started: dict[str, Any]
    finished: dict[str, Any] | None  # None: the shard never finished
    phases: dict[str, list[Attempt]]  # JUnit file name -> its rows
    files: ShardFiles | None = None  # None: a shard that sent no build (the run made this one of what it sent)

    @property
    def where(self) -> str:
        return self.files.where if self.files is not None else f"shard {self.shard}"

    @property
    def metadata(self) -> dict[str, Any]:
        value = self.started.get("metadata")
        return value if isinstance(value, dict) else {}

    @property
    def result(self) -> BuildResult:
        return BuildResult.stored(self.finished.get("result")) if self.finished is not None else BuildResult.FAILURE

    @property
    def attempts(self) -> list[Attempt]:
        return [row for rows in self.phases.values() for row in rows]

    @property
    def cut_off(self) -> bool:
        """Something stopped the shard's run before it ended by itself: it ended ABORTED (a signal), never
        finished, or a row of it is interrupted."""
        return (self.finished is None or self.result is BuildResult.ABORTED
                or any(row.outcome is Outcome.INTERRUPTED for row in self.attempts))


def read_shard_build(files: ShardFiles) -> ShardBuild:
    started = files.json(STARTED)
    if started is None:
        raise UsageError(f"{files.where}: not a build directory (no {STARTED})")
    metadata = started.get("metadata")
    ref = metadata.get(prow.SHARD_METADATA) if isinstance(metadata, dict) else None
    if not isinstance(ref, str):
        raise DataError(files.where, f"{STARTED}: metadata.shard",
                        "not a shard build (made by `winsuite run --shard I/N`)")
    try:
        shard = ShardRef.parse(ref)
    except UsageError as err:
        raise DataError(files.where, f"{STARTED}: metadata.shard", str(err)) from None
    return ShardBuild(shard, started, files.json(FINISHED), files.junit(), files)


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
    where: dict[int, str] = {}
    for build in builds:
        if build.shard.number in where:
            raise UsageError(f"shard {build.shard} given twice: {where[build.shard.number]} and {build.where}")
        where[build.shard.number] = build.where
    missing = [f"{n}/{counts[0]}" for n in range(1, counts[0] + 1) if n not in where]
    if missing:
        raise UsageError(f"shard(s) {', '.join(missing)} missing: every shard's build is needed for one build")
    owner: dict[tuple[str, str], str] = {}
    for build in builds:
        for key in dict.fromkeys((a.name, engine_of(a)) for a in build.attempts):
            if key in owner:
                raise UsageError(f"duplicate rows: {key[0]!r} is in shard builds {owner[key]} and {build.where} "
                                 "(shards cut from different plans, or one build given twice)")
            owner[key] = build.where


def merged_result(builds: Sequence[ShardBuild]) -> BuildResult:
    results = {b.result for b in builds}
    return (BuildResult.ABORTED if BuildResult.ABORTED in results
            else BuildResult.FAILURE if BuildResult.FAILURE in results else BuildResult.SUCCESS)


def merged_start(builds: Sequence[ShardBuild]) -> float:
    """When the first shard started."""
    return min((t for b in builds if isinstance(t := b.started.get("timestamp"), int | float)), default=time.time())


def merged_metadata(builds: Sequence[ShardBuild], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the merged build says of how it was asked for: the first shard's metadata (but which shard it is),
    every shard with its result and where its files are, then `extra`."""
    builds = _in_order(builds)
    metadata = {k: v for k, v in builds[0].metadata.items() if k != prow.SHARD_METADATA}
    metadata["shards"] = [_shard_entry(b) for b in builds]
    return metadata | (extra or {})


def finished_metadata(builds: Sequence[ShardBuild], metadata: dict[str, Any]) -> dict[str, Any]:
    """The merged build's finished.json metadata: the first shard's (what it found of the cluster), over it the
    merged `metadata`, and each shard that did not pass, with why."""
    first = _in_order(builds)[0]
    finished = dict(first.finished.get("metadata") or {}) if first.finished else {}
    finished = {k: v for k, v in finished.items() if k not in (prow.SHARD_METADATA, "interrupted", "error")}
    finished.update(metadata)
    not_passed = [f"{b.shard}: {_why(b)}" for b in _in_order(builds) if b.result is not BuildResult.SUCCESS]
    if not_passed:
        finished["shards-not-passed"] = not_passed
    return finished


def merge_into(builds: Sequence[ShardBuild], build: Build) -> None:
    """Every shard's files placed in `build`'s directory (`check_shards` first), and every shard's rows, in shard
    order, judged into their phase of `build`."""
    builds = _in_order(builds)
    build_dir = build.output.build_dir
    for shard_build in builds:
        number = shard_build.shard.number
        (build_dir / own_dir(number)).mkdir(parents=True, exist_ok=True)
        if shard_build.files is not None:
            shard_build.files.place(number, build_dir)
    for phase in sorted({name for shard_build in builds for name in shard_build.phases}):
        build.judged(phase, [row for shard_build in builds for row in shard_build.phases.get(phase, [])])


def _in_order(builds: Sequence[ShardBuild]) -> list[ShardBuild]:
    return sorted(builds, key=lambda b: b.shard.number)


def _why(build: ShardBuild) -> str:
    if build.finished is None:
        return "did not finish"
    metadata = build.finished.get("metadata")
    detail = metadata.get("interrupted") or metadata.get("error") if isinstance(metadata, dict) else None
    return f"{build.result}" + (f" ({detail})" if detail else "")


def _shard_entry(build: ShardBuild) -> dict[str, str]:
    """A shard build received from its pod has no directory to name: its files are the merged build's."""
    entry = {"shard": str(build.shard), "result": str(build.result)}
    directory = build.files.directory if build.files is not None else None
    if directory is not None:
        entry["build"] = str(directory)
    entry["files"] = f"{own_dir(build.shard.number)}/"
    return entry
