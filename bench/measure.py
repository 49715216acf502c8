"""How the benches measure: the environment a user's process has, the order sides run in, the figure of repeated
runs (median, percentile) with every run beside it, and the goal line."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def user_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a user's run has: Python caches bytecode (a sandbox's PYTHONDONTWRITEBYTECODE=1 would make
    every process the bench starts compile winsuite from source)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **(extra or {})}


def alternating(sides: Sequence[T], rounds: int) -> list[T]:
    """Each side `rounds` times, every other round reversed (A B, B A, A B …): no side always goes first or always
    follows the same other, so the machine's drift and what one side leaves behind fall on all of them alike."""
    order: list[T] = []
    for number in range(rounds):
        order.extend(sides if number % 2 == 0 else reversed(sides))
    return order


def median(values: Sequence[float]) -> float:
    """The median run (of an even number, the slower of the middle two: always a run that happened)."""
    if not values:
        raise ValueError("the median of no runs")
    return sorted(values)[len(values) // 2]


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile: the smallest value that `fraction` of the values are at or below."""
    if not values or not 0 < fraction <= 1:
        raise ValueError(f"percentile {fraction} of {len(values)} values")
    rank = math.ceil(round(fraction * len(values), 9))  # rounded first: 0.07 * 100 is 7.000000000000001
    return sorted(values)[rank - 1]


def spread(values: Sequence[float], unit: str = "s") -> str:
    """Every run, fastest first, the median's in brackets: "median of 3 runs: 0.22 [0.25] 0.31 s"."""
    ordered = sorted(values)
    middle = len(ordered) // 2  # as `median` picks it
    shown = " ".join(f"[{value:.2f}]" if i == middle else f"{value:.2f}" for i, value in enumerate(ordered))
    return f"median of {len(ordered)} run{'' if len(ordered) == 1 else 's'}: {shown} {unit}"


def goal_line(goal: str, met: bool) -> str:
    """The line every bench ends with; a missed goal also exits 1."""
    return f"goal ({goal}): {'met' if met else 'MISSED'}"
