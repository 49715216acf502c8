"""Malformed inputs of every kind, through the CLI: one clear line and a documented exit code, never a traceback,
never a hang, never exit 0 for an input no schema accepts; a file in a directory that cannot be entered, or under a
name or path too long for the file system, is a usage error naming it. bench/fuzz_inputs.py runs thousands of them."""

from __future__ import annotations

import random
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.tools.fuzz_inputs import KINDS
from tests.tools.fuzz_inputs import PATH_CASES
from tests.tools.fuzz_inputs import describe
from tests.tools.fuzz_inputs import expected
from tests.tools.fuzz_inputs import keep_to_loopback
from tests.tools.fuzz_inputs import materialize
from tests.tools.fuzz_inputs import run_cli
from tests.tools.fuzz_mutations import mutate
from tests.tools.fuzz_mutations import path_case


@pytest.fixture(autouse=True, scope="module")
def _loopback_only() -> Iterator[None]:
    with keep_to_loopback():
        yield


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rng=st.randoms(use_true_random=False))
def test_a_malformed_input_ends_in_one_line(kind: str, rng: random.Random) -> None:
    case = mutate(KINDS[kind], rng)
    with tempfile.TemporaryDirectory() as scratch:
        argv, env = materialize(case, Path(scratch))
        code, stderr = run_cli(argv, env, unprivileged=case.mutation == "unreadable-directory")
    assert expected(case, code, stderr) is None, f"{describe(case)}\nexit {code}\n{stderr[-2000:]}"


@pytest.mark.parametrize("path", PATH_CASES)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_file_at_a_path_that_cannot_be_read_is_a_usage_error_naming_it(kind: str, path: str) -> None:
    case = path_case(KINDS[kind], path)
    with tempfile.TemporaryDirectory() as scratch:
        argv, env = materialize(case, Path(scratch))
        code, stderr = run_cli(argv, env, unprivileged=path == "unreadable-directory")
    assert expected(case, code, stderr) is None, f"{describe(case)}\nexit {code}\n{stderr[-2000:]}"
