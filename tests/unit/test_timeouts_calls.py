"""Each call to the cluster has its own bound, and none outlasts the poll it is made in (k8s/waits.py
call_timeout), so a poll's budget holds however a call inside it hangs."""

from __future__ import annotations

import time

import pytest

from winsuite.k8s import waits


def test_outside_any_poll_a_call_gets_its_own_bound() -> None:
    assert waits.call_timeout() == waits.CALL_TIMEOUT
    assert waits.call_timeout(60) == 60


def test_inside_a_poll_a_call_gets_no_more_than_the_poll_has_left() -> None:
    bounds: list[float] = []
    waits.poll("a bound", lambda: bounds.append(waits.call_timeout(60)), timeout=5)
    assert 4 < bounds[0] <= 5
    assert waits.call_timeout(60) == 60  # the poll is over


def test_nested_polls_bound_a_call_by_the_one_that_ends_first() -> None:
    bounds: list[float] = []

    def inner() -> None:
        waits.poll("inner", lambda: bounds.append(waits.call_timeout(60)), timeout=30)

    waits.poll("outer", inner, timeout=3)
    assert 2 < bounds[0] <= 3


def test_at_the_end_of_a_poll_a_call_still_gets_a_moment() -> None:
    bounds: list[float] = []

    def late() -> None:
        time.sleep(0.3)
        bounds.append(waits.call_timeout(60))
        raise AssertionError("not yet")

    with pytest.raises(waits.WaitTimeout):
        waits.poll("late", late, timeout=0.2, interval=0.1)
    assert bounds == [waits.MIN_CALL_TIMEOUT]
