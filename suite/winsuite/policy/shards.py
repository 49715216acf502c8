"""A run's selection cut into shards of even expected duration.

Each test is expected to take what it took when it last ran (the record of durations the caller passes), else, for a
test never run here, the median of the recorded ones, or by its declared slowness when nothing is recorded
(upstream's `[Slow]` marks specs of five minutes and more); a test the policy skips with a reason takes no time, but
still belongs to one shard, which reports its row. Serial tests run alone whatever the shard, so they stay together in
one shard, as one block. The cut is the longest-processing-time rule: the longest test (or the serial block) goes to
the shard expected to finish first. Equal inputs give the same shards.

The shards are also a file, the shard plan (`winsuite list --shards N --format json`, read by `--shard-plan`), so
shards run on different machines (a CI matrix, the pods of an in-cluster run) follow one cut whatever each machine
has recorded.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.errors import shown

DEFAULT_SECONDS = 30.0  # a test with no record where nothing is recorded
SLOW_SECONDS = 300.0  # a [Slow] test with no record


@dataclasses.dataclass(frozen=True)
class ShardedTest:
    name: str
    serial: bool = False
    slow: bool = False
    skipped: bool = False  # the policy skips it with a reason: its row costs nothing


@dataclasses.dataclass(frozen=True)
class Shard:
    number: int  # 1-based, as `--shard I/N` counts
    tests: tuple[str, ...]
    expected: float  # seconds, the sum of its tests' expected durations


def expected_durations(tests: Sequence[ShardedTest], recorded: Mapping[str, float]) -> dict[str, float]:
    known = sorted(recorded[t.name] for t in tests if t.name in recorded and not t.skipped)
    typical = known[len(known) // 2] if known else DEFAULT_SECONDS
    return {t.name: 0.0 if t.skipped else recorded.get(t.name, max(typical, SLOW_SECONDS) if t.slow else typical)
            for t in tests}


def cut_shards(tests: Sequence[ShardedTest], count: int, recorded: Mapping[str, float]) -> list[Shard]:
    """`count` shards (some may be empty when there are fewer blocks than shards), each test in exactly one."""
    if count < 1:
        raise ValueError(f"shards must be at least 1, got {count}")
    expected = expected_durations(tests, recorded)
    blocks: list[tuple[float, tuple[str, ...]]] = [(expected[t.name], (t.name,)) for t in tests if not t.serial]
    serial = tuple(sorted(t.name for t in tests if t.serial))
    if serial:
        blocks.append((sum(expected[name] for name in serial), serial))
    # Longest first; equal ones by name, so the cut does not depend on the order tests were given in.
    blocks.sort(key=lambda block: (-block[0], block[1]))
    loads = [0.0] * count
    members: list[list[str]] = [[] for _ in range(count)]
    for seconds, names in blocks:
        target = min(range(count), key=lambda index: (loads[index], index))
        loads[target] += seconds
        members[target] += names
    order = {t.name: index for index, t in enumerate(tests)}  # within a shard, the given order
    return [Shard(index + 1, tuple(sorted(members[index], key=order.__getitem__)), loads[index])
            for index in range(count)]


_SHARD_REF = re.compile(r"^([1-9][0-9]{0,3})/([1-9][0-9]{0,3})$")


@dataclasses.dataclass(frozen=True)
class ShardRef:
    """`--shard I/N`: the I-th of N shards, 1-based."""

    number: int
    count: int

    def __str__(self) -> str:
        return f"{self.number}/{self.count}"

    @staticmethod
    def parse(text: str) -> ShardRef:
        match = _SHARD_REF.match(text.strip())
        if match is None or int(match[1]) > int(match[2]):
            raise UsageError(f"--shard {text!r}: expected I/N with 1 <= I <= N (e.g. 2/4)")
        return ShardRef(int(match[1]), int(match[2]))


def shards_document(job: str, shards: Sequence[Shard]) -> dict[str, Any]:
    """The shards as `winsuite list --shards N --format json` prints them and `--shard-plan` reads them."""
    count = len(shards)
    return {"job": job, "shards": [
        {"shard": f"{s.number}/{count}", "expectedSeconds": round(s.expected, 1), "tests": list(s.tests)}
        for s in shards]}


def read_shards(path: Path, raw: Any) -> list[Shard]:
    """A shard plan read back (`raw` is the parsed file); every shape error names the file and field."""
    if not isinstance(raw, dict) or not isinstance(raw.get("shards"), list) or not raw["shards"]:
        raise DataError(path, "shards", f"expected a non-empty list of shards, got {shown(raw)}")
    entries: list[Any] = raw["shards"]
    shards = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        where = f"shards[{index}]"
        if not isinstance(entry, dict):
            raise DataError(path, where, f"expected {{shard, expectedSeconds, tests}}, got {shown(entry)}")
        ref = f"{index + 1}/{len(entries)}"
        if entry.get("shard") != ref:
            raise DataError(path, f"{where}.shard", f"expected {ref}, got {shown(entry.get('shard'))}")
        tests = entry.get("tests")
        if not isinstance(tests, list) or not all(isinstance(t, str) and t for t in tests):
            raise DataError(path, f"{where}.tests", f"expected a list of test names, got {shown(tests)}")
        for name in tests:
            if name in seen:
                raise DataError(path, f"{where}.tests", f"{name!r} is in shard {seen[name]} already")
            seen[name] = index + 1
        expected = entry.get("expectedSeconds", 0.0)
        if isinstance(expected, bool) or not isinstance(expected, int | float) or not 0 <= expected < 1e9:
            raise DataError(path, f"{where}.expectedSeconds", f"expected seconds, got {shown(expected)}")
        shards.append(Shard(index + 1, tuple(tests), float(expected)))
    return shards

