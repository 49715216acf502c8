"""A run's selection cut into shards of even expected duration.

Each test is expected to take what it took when it last ran (the record of durations the caller passes), else, for a
test never run here, the median of the recorded ones, or by its declared slowness when nothing is recorded
(upstream's `[Slow]` marks specs of five minutes and more). Serial tests run alone whatever the shard, so they
stay together in one shard, as one block. The cut is the longest-processing-time rule: the longest test (or the
serial block) goes to the shard expected to finish first. Equal inputs give the same plan.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from collections.abc import Sequence

DEFAULT_SECONDS = 30.0  # a test with no record where nothing is recorded
SLOW_SECONDS = 300.0  # a [Slow] test with no record


@dataclasses.dataclass(frozen=True)
class PlannedTest:
    name: str
    serial: bool = False
    slow: bool = False


@dataclasses.dataclass(frozen=True)
class Shard:
    number: int  # 1-based, as `--shard I/N` counts
    tests: tuple[str, ...]
    expected: float  # seconds, the sum of its tests' expected durations


def expected_durations(tests: Sequence[PlannedTest], recorded: Mapping[str, float]) -> dict[str, float]:
    known = sorted(recorded[t.name] for t in tests if t.name in recorded)
    typical = known[len(known) // 2] if known else DEFAULT_SECONDS
    return {t.name: recorded.get(t.name, max(typical, SLOW_SECONDS) if t.slow else typical) for t in tests}


def plan_shards(tests: Sequence[PlannedTest], count: int, recorded: Mapping[str, float]) -> list[Shard]:
    """`count` shards (some may be empty when there are fewer blocks than shards), each test in exactly one."""
    if count < 1:
        raise ValueError(f"shards must be at least 1, got {count}")
    expected = expected_durations(tests, recorded)
    blocks: list[tuple[float, tuple[str, ...]]] = [(expected[t.name], (t.name,)) for t in tests if not t.serial]
    serial = tuple(sorted(t.name for t in tests if t.serial))
    if serial:
        blocks.append((sum(expected[name] for name in serial), serial))
    # Longest first; equal ones by name, so the plan does not depend on the order tests were given in.
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
