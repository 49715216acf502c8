"""The shard cut: even expected durations, serial tests together, the same shards for the same input."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from winsuite import cli
from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.policy.shard_selection import load_shards
from winsuite.policy.shards import DEFAULT_SECONDS
from winsuite.policy.shards import SLOW_SECONDS
from winsuite.policy.shards import ShardedTest
from winsuite.policy.shards import ShardRef
from winsuite.policy.shards import cut_shards
from winsuite.policy.shards import expected_durations
from winsuite.policy.shards import shards_document


def test_recorded_durations_cut_even_shards() -> None:
    tests = [ShardedTest(f"t{i}") for i in range(6)]
    recorded = {"t0": 5.0, "t1": 3.0, "t2": 4.0, "t3": 5.0, "t4": 3.0, "t5": 4.0}
    shards = cut_shards(tests, 2, recorded)
    assert [shard.expected for shard in shards] == [12.0, 12.0]
    assert [shard.tests for shard in shards] == [("t0", "t1", "t2"), ("t3", "t4", "t5")]
    assert sorted(name for shard in shards for name in shard.tests) == sorted(t.name for t in tests)


def test_serial_tests_stay_together_in_one_shard() -> None:
    tests = [ShardedTest("s1", serial=True), ShardedTest("p1"), ShardedTest("s2", serial=True), ShardedTest("p2")]
    shards = cut_shards(tests, 3, {"s1": 5.0, "s2": 5.0, "p1": 8.0, "p2": 1.0})
    holding = [shard for shard in shards if {"s1", "s2"} & set(shard.tests)]
    assert len(holding) == 1 and {"s1", "s2"} <= set(holding[0].tests)


def test_without_a_record_slowness_decides() -> None:
    tests = [ShardedTest("slow", slow=True), ShardedTest("quick")]
    assert expected_durations(tests, {}) == {"slow": SLOW_SECONDS, "quick": DEFAULT_SECONDS}
    assert expected_durations(tests, {"quick": 2.0}) == {"slow": SLOW_SECONDS, "quick": 2.0}
    assert expected_durations([ShardedTest("new"), ShardedTest("a")], {"a": 4.0})["new"] == 4.0


def test_zero_shards_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        cut_shards([ShardedTest("a")], 0, {})


@given(st.lists(st.tuples(st.floats(0, 600), st.booleans()), max_size=60), st.integers(1, 8), st.randoms())
def test_every_test_in_exactly_one_shard_and_the_plan_does_not_depend_on_input_order(
        durations: list[tuple[float, bool]], count: int, rng: random.Random) -> None:
    tests = [ShardedTest(f"test {i}", serial=serial) for i, (_, serial) in enumerate(durations)]
    recorded = {f"test {i}": seconds for i, (seconds, _) in enumerate(durations)}
    plan = cut_shards(tests, count, recorded)
    assert len(plan) == count
    assert sorted(name for shard in plan for name in shard.tests) == sorted(t.name for t in tests)
    shuffled = list(tests)
    rng.shuffle(shuffled)
    assert [set(s.tests) for s in cut_shards(shuffled, count, recorded)] == [set(s.tests) for s in plan]
    # The longest-processing-time bound: no shard is expected to run longer than an even share plus one block.
    blocks = [recorded[t.name] for t in tests if not t.serial] + [sum(recorded[t.name] for t in tests if t.serial)]
    assert max(s.expected for s in plan) <= sum(blocks) / count + max(blocks) + 1e-6


def test_list_shows_the_plan_with_every_selected_test_once(capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WINSUITE_CACHE_DIR", str(tmp_path))  # no record of durations: declared slowness decides
    selection = ["list", "--node-os", "linux", "--engine", "native", "--focus", r"\[sig-node\] (Pods|Downward API)"]
    assert cli.main([*selection, "--format", "names"]) == 0
    names = capsys.readouterr().out.split("\n")
    assert cli.main([*selection, "--shards", "3", "--format", "json"]) == 0
    shards = json.loads(capsys.readouterr().out)["shards"]
    assert [s["shard"] for s in shards] == ["1/3", "2/3", "3/3"]
    assert sorted(name for s in shards for name in s["tests"]) == sorted(n for n in names if n)
    assert max(s["expectedSeconds"] for s in shards) - min(s["expectedSeconds"] for s in shards) <= DEFAULT_SECONDS


def test_a_skipped_test_costs_nothing_but_belongs_to_one_shard() -> None:
    tests = [ShardedTest("a"), ShardedTest("b"), ShardedTest("excluded", skipped=True)]
    assert expected_durations(tests, {"excluded": 50.0, "a": 4.0})["excluded"] == 0.0
    plan = cut_shards(tests, 2, {"a": 4.0, "b": 4.0})
    assert sorted(name for shard in plan for name in shard.tests) == ["a", "b", "excluded"]


@pytest.mark.parametrize("text", ["0/2", "3/2", "1/0", "a/b", "1", "1/2/3", "-1/2", ""])
def test_shard_refs_other_than_i_of_n_are_refused(text: str) -> None:
    with pytest.raises(UsageError, match="expected I/N"):
        ShardRef.parse(text)


def test_shard_ref_reads_i_of_n() -> None:
    assert ShardRef.parse(" 2/4 ") == ShardRef(2, 4) and str(ShardRef(2, 4)) == "2/4"


def test_a_plan_file_round_trips_and_bad_ones_name_the_field(tmp_path: Path) -> None:
    plan = cut_shards([ShardedTest("a"), ShardedTest("b"), ShardedTest("c")], 2, {"a": 3.0})
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(shards_document("job", plan)))
    assert load_shards(path) == plan
    for raw, field in (({"shards": "x"}, "shards"), ({"shards": [{"shard": "2/1", "tests": []}]}, "shards[0].shard"),
                       ({"shards": [{"shard": "1/1", "tests": [1]}]}, "shards[0].tests"),
                       ({"shards": [{"shard": "1/2", "tests": ["a"]}, {"shard": "2/2", "tests": ["a"]}]},
                        "shards[1].tests")):
        path.write_text(json.dumps(raw))
        with pytest.raises(DataError) as caught:
            load_shards(path)
        assert caught.value.field == field


def test_run_with_a_plan_of_another_count_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(shards_document("job", cut_shards([ShardedTest("a")], 1, {}))))
    assert cli.main(["run", "--shard", "1/2", "--shard-plan", str(path), "--kubeconfig", str(tmp_path / "none")]) == 4
    assert "error" in capsys.readouterr().err
    assert cli.main(["run", "--shard", "3/2"]) == 4
    assert "expected I/N" in capsys.readouterr().err
