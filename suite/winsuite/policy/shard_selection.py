"""Which tests one shard of a run runs: the run's selection, cut into shards, narrowed to one of them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from winsuite.authoring.naming import Slow
from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.given_paths import unreadable
from winsuite.policy.catalog import CatalogTest
from winsuite.policy.run_config import RunConfig
from winsuite.policy.selection import Outcome
from winsuite.policy.shards import Shard
from winsuite.policy.shards import ShardedTest
from winsuite.policy.shards import ShardRef
from winsuite.policy.shards import cut_shards
from winsuite.policy.shards import read_shards
from winsuite_reports.prow import MalformedJson
from winsuite_reports.prow import read_json_object


def sharded_tests(run: RunConfig, tests: Iterable[CatalogTest]) -> list[ShardedTest]:
    """Every test the run reports (run, or skipped with a reason), once each (a test both engines run is one)."""
    reported: dict[str, ShardedTest] = {}
    for test in tests:
        verdict = run.policy.decide(test.name, test.tags)
        if verdict.outcome is not Outcome.DESELECT and test.name not in reported:
            reported[test.name] = ShardedTest(test.name, serial=test.serial, slow=Slow in test.tags,
                                              skipped=verdict.outcome is Outcome.SKIP)
    return list(reported.values())


def load_shards(path: Path) -> list[Shard]:
    """A shard plan file written by `winsuite list --shards N --format json`."""
    try:
        raw = read_json_object(path)
    except OSError as err:
        raise unreadable("shard plan", path, err) from None
    except MalformedJson as err:
        raise DataError(path, "", f"not a shard plan: {err}") from None
    return read_shards(path, raw)


def shard_tests(run: RunConfig, tests: Iterable[CatalogTest], shard: ShardRef,
                shards: list[Shard] | None = None) -> Shard:
    """The tests of `shard`: from `shards` when given (a shard plan file, read with `load_shards`), else by the
    tests' declared slowness alone. Not by this machine's record of durations: shards run one after another, or on
    machines of a CI matrix, have different records, and shards cut from different plans would run some tests twice
    and others never."""
    if shards is not None:
        return shards[shard.number - 1]
    return cut_shards(sharded_tests(run, tests), shard.count, {})[shard.number - 1]


def load_shards_for(shard: ShardRef, path: Path) -> list[Shard]:
    """`--shard-plan`, read before anything runs: as many shards as `--shard I/N` says."""
    shards = load_shards(path)
    if len(shards) != shard.count:
        raise UsageError(f"--shard {shard}: the plan {path} has {len(shards)} shard(s), not {shard.count}")
    return shards

