"""The record of test durations that orders a parallel phase longest first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from winsuite.policy.shards import ShardedTest
from winsuite.policy.shards import expected_durations
from winsuite.results import durations
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome


def attempt(name: str, outcome: Outcome, seconds: float) -> Attempt:
    return Attempt(name, f"test_x.py::{name}", outcome, duration=seconds)


def longest_first(names: list[str], known: dict[str, float]) -> list[int]:
    """The order a parallel phase gives its tests (plugin.collection): by expected duration, longest first."""
    expected = expected_durations([ShardedTest(name) for name in names], known)
    return sorted(range(len(names)), key=lambda index: -expected[names[index]])


def test_the_longest_known_go_first_and_an_unknown_one_counts_as_the_median() -> None:
    known = {"a": 1.0, "b": 11.0, "c": 3.0}
    assert longest_first(["a", "new", "b", "c"], known) == [2, 1, 3, 0]  # b 11, new ~3 (median), c 3, a 1


def test_with_no_record_the_order_is_kept() -> None:
    assert longest_first(["x", "y", "z"], {}) == [0, 1, 2]


def test_a_run_records_what_ran_to_a_verdict_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    durations.record([attempt("a", Outcome.PASSED, 2.5), attempt("b", Outcome.SKIPPED, 0.0)], path)
    durations.record([attempt("c", Outcome.FAILED, 7.25)], path)
    assert durations.load(path) == {"a": 2.5, "c": 7.25}


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"a": "slow", "b": -1, "c": true, "d": 2}', ""])
def test_a_malformed_record_is_ignored(tmp_path: Path, content: str) -> None:
    path = tmp_path / "durations.json"
    path.write_text(content)
    assert durations.load(path) == ({"d": 2.0} if '"d"' in content else {})


def test_a_snapshot_is_what_the_phases_read_whatever_is_written_after(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WINSUITE_CACHE_DIR", str(tmp_path / "cache"))
    durations.record([attempt("a", Outcome.PASSED, 1.0)])
    copy = durations.snapshot(tmp_path / "snapshot.json")
    durations.record([attempt("a", Outcome.PASSED, 9.0)])
    assert json.loads(copy.read_text()) == {"a": 1.0}
    assert durations.load() == {"a": 9.0}


def test_a_jobs_stored_builds_give_durations_the_newest_winning(tmp_path: Path) -> None:
    from winsuite.results import junit
    from winsuite.results.durations import of_job
    from winsuite.results.model import Attempt
    from winsuite.results.model import Outcome

    for build, seconds in (("20260101000000", 5.0), ("20260102000000", 7.0)):
        junit.write(tmp_path / build / "artifacts" / "junit_01.xml",
                    [Attempt("a", "", Outcome.PASSED, duration=seconds), Attempt("s", "", Outcome.SKIPPED,
                                                                                 duration=0.1)])
    (tmp_path / "20260103000000" / "artifacts").mkdir(parents=True)
    (tmp_path / "20260103000000" / "artifacts" / "junit_01.xml").write_text("<not xml")
    assert of_job(tmp_path) == {"a": 7.0}
