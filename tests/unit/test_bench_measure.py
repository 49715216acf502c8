"""The benches' figures: the order sides run in, the median and percentile picked, the runs shown."""

from __future__ import annotations

import pytest

from bench.measure import alternating
from bench.measure import goal_line
from bench.measure import median
from bench.measure import percentile
from bench.measure import spread
from bench.measure import user_env


def test_sides_alternate_so_neither_always_goes_first() -> None:
    assert alternating(["A", "B"], 3) == ["A", "B", "B", "A", "A", "B"]
    assert alternating(["A", "B", "C"], 2) == ["A", "B", "C", "C", "B", "A"]
    assert alternating(["A", "B"], 0) == []


def test_the_median_is_a_run_that_happened() -> None:
    assert median([0.31, 0.22, 0.25]) == 0.25
    assert median([4.0, 1.0, 3.0, 2.0]) == 3.0  # of an even number, the slower of the middle two
    with pytest.raises(ValueError):
        median([])


def test_the_p95_is_the_nearest_rank() -> None:
    samples = [i / 1000 for i in range(100, 0, -1)]  # 1 ms … 100 ms, in no order a sort would keep
    assert percentile(samples, 0.95) == 0.095
    assert percentile(samples, 1.0) == 0.1
    assert percentile([0.5], 0.95) == 0.5
    assert percentile(list(range(1, 101)), 0.07) == 7  # not 8: 0.07 * 100 is a hair over 7 in floating point
    assert percentile([0.01] * 19 + [9.0], 0.95) == 0.01  # one slow sample in twenty is the p95's 5 %
    assert percentile([0.01] * 18 + [9.0, 9.0], 0.95) == 9.0
    with pytest.raises(ValueError):
        percentile([], 0.95)


def test_every_run_is_shown_beside_the_median() -> None:
    assert spread([0.31, 0.22, 0.25]) == "median of 3 runs: 0.22 [0.25] 0.31 s"
    assert spread([1.5], "ms") == "median of 1 run: [1.50] ms"


def test_a_missed_goal_says_so() -> None:
    assert goal_line("p95 <= 100 ms", True) == "goal (p95 <= 100 ms): met"
    assert goal_line("p95 <= 100 ms", False) == "goal (p95 <= 100 ms): MISSED"


def test_a_user_run_caches_bytecode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = user_env({"EXTRA": "yes"})
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["EXTRA"] == "yes"
