"""The run's parallelism shared by both engines when a phase runs them at the same time."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from winsuite.run.engines.together import split_workers


def test_the_share_follows_the_tests() -> None:
    assert split_workers(2, 35, 35) == (1, 1)
    assert split_workers(8, 30, 10) == (6, 2)
    assert split_workers(8, 1, 100) == (1, 7)
    assert split_workers(4, 100, 1) == (3, 1)


@given(st.integers(2, 64), st.integers(1, 500), st.integers(1, 500))
def test_each_engine_gets_a_process_and_never_more_than_its_tests_or_the_parallelism(
        parallelism: int, native: int, upstream: int) -> None:
    native_workers, ginkgo_procs = split_workers(parallelism, native, upstream)
    assert 1 <= native_workers <= native and 1 <= ginkgo_procs <= upstream
    assert native_workers + ginkgo_procs <= parallelism
    # Nothing idle that a test could use: the parallelism is used up unless an engine has too few tests.
    assert native_workers + ginkgo_procs == min(parallelism, native + upstream) or (
        native_workers == native or ginkgo_procs == upstream)
