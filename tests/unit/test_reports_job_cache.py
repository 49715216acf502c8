"""The report cache's job entries: each job's grid and derived states (failure clusters, where rows ran) extended
by a new build, appended to rather than written again, and made anew when what is stored does not fit."""

from __future__ import annotations

import json
import os
import sqlite3
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.tools.report_histories import NOW
from tests.tools.report_histories import columns
from tests.tools.report_histories import history_of
from tests.tools.report_histories import remove_build
from tests.tools.report_histories import write_histories
from winsuite_reports.cache import CACHE_FILE
from winsuite_reports.conventions import artifacts_dir
from winsuite_reports.conventions import junit_name
from winsuite_reports.model import Status
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import CODES
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_build
from winsuite_reports.synthetic import write_job


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return write_histories(tmp_path / "results")


def stored_job_builds(root: Path, job: str) -> list[str]:
    with sqlite3.connect(root / CACHE_FILE) as db:
        (listed,) = db.execute("SELECT builds FROM jobs WHERE path = ?", (job,)).fetchone()
    return [path for path, _ in json.loads(listed)]


def test_the_stored_grid_is_extended_by_the_new_builds(results: Path) -> None:
    history_of(results, cache=True)
    job = results / "ci-windows"
    write_build(job, START + 10 * 3600, {"[sig-windows] pods pass": "F", "[sig-windows] a new row": "P"})
    write_build(job, START + 11 * 3600, {"[sig-windows] flaky one": "K"})
    cached = history_of(results, cache=True)
    assert columns(cached) == columns(history_of(results, cache=False))
    windows = next(j for j in cached.jobs if j.name == "ci-windows")
    assert [c.status for c in windows.cells("[sig-windows] a new row")][:3] == [Status.NO_RESULT, Status.PASS,
                                                                             Status.NO_RESULT]
    assert stored_job_builds(results, "ci-windows") == [f"ci-windows/{build.id}" for build in windows.builds]


def stored_cells(root: Path, job: str) -> str:
    with sqlite3.connect(root / CACHE_FILE) as db:
        (cells,) = db.execute("SELECT cells FROM jobs WHERE path = ?", (job,)).fetchone()
    return str(cells)


def test_a_new_build_appends_its_cells_to_the_stored_table(results: Path) -> None:
    history_of(results, cache=True)
    before = stored_cells(results, "ci-windows")
    write_build(results / "ci-windows", START + 10 * 3600, {"[sig-windows] pods pass": "F"})
    history_of(results, cache=True)
    after = stored_cells(results, "ci-windows")
    assert after.startswith(before[:-1]) and len(json.loads(after)) == len(json.loads(before)) + 1


def stored_states(root: Path, job: str) -> dict[str, list[str]]:
    with sqlite3.connect(root / CACHE_FILE) as db:
        return {kind: state.split("\n") for kind, state in db.execute(
            "SELECT kind, state FROM derived WHERE path = ?", (job,))}


def test_a_new_build_adds_its_failures_and_placement_to_the_stored_text(results: Path) -> None:
    history_of(results, cache=True)
    before = stored_states(results, "ci-windows")
    write_build(results / "ci-windows", START + 10 * 3600, {"[sig-windows] pods pass": "F"},
                properties={"[sig-windows] pods pass": {"ran-on": "win-0 (windows)"}})
    history_of(results, cache=True)
    after = stored_states(results, "ci-windows")
    builds, occurrences = after["failures"][1:]
    assert builds.startswith(before["failures"][1][:-1]) and len(json.loads(builds)) == len(
        json.loads(before["failures"][1])) + 1
    assert occurrences.startswith(before["failures"][2][:-1]) and len(json.loads(occurrences)) == len(
        json.loads(before["failures"][2])) + 1
    assert after["ran-on"][1].endswith(before["ran-on"][1][1:])  # the new build's column in front


def test_a_sliding_window_keeps_no_more_cells_than_its_rows_use(tmp_path: Path) -> None:
    root = tmp_path / "results"
    write_job(root, "ci", {"[sig-node] a": "FF"})
    for hour in range(10, 30):  # each failure's own message: a cell of its own
        write_build(root / "ci", START + hour * 3600, {"[sig-node] a": "F"}, messages={"[sig-node] a": f"{hour}"})
        load_history(root, max_builds=2, now=NOW)
    table = json.loads(stored_cells(root, "ci"))
    assert len(table) <= 2 * 3  # NO_RESULT and the window's two failures, and at most as many left behind
    assert columns(load_history(root, max_builds=2, now=NOW)) == columns(
        load_history(root, cache=False, max_builds=2, now=NOW))


def test_a_window_of_the_newest_builds_slides_and_drops_the_rows_only_its_oldest_had(tmp_path: Path) -> None:
    root = tmp_path / "results"
    write_job(root, "ci", {"[sig-node] always": "PPPP", "[sig-node] only the oldest": "___F"})
    assert "[sig-node] only the oldest" in load_history(root, max_builds=4, now=NOW).jobs[0].rows
    write_build(root / "ci", START + 10 * 3600, {"[sig-node] always": "F"})
    cached = load_history(root, max_builds=4, now=NOW)
    assert columns(cached) == columns(load_history(root, cache=False, max_builds=4, now=NOW))
    assert list(cached.jobs[0].rows) == ["[sig-node] always"]


def test_a_rewritten_build_remakes_the_grid(results: Path) -> None:
    history_of(results, cache=True)
    job = results / "ci-linux"
    oldest = min(path for path in job.iterdir() if path.is_dir())
    junit = artifacts_dir(oldest) / junit_name(1)
    junit.write_text(junit.read_text().replace("[sig-node] a", "[sig-node] b"))
    os.utime(junit, ns=(junit.stat().st_atime_ns, junit.stat().st_mtime_ns + 1_000_000))
    assert columns(history_of(results, cache=True)) == columns(history_of(results, cache=False))


def test_a_one_build_job_keeps_no_grid_until_a_second_build_comes(tmp_path: Path) -> None:
    root = tmp_path / "results"
    write_job(root, "ci", {"[sig-node] a": "P", "[sig-node] b": "F"})
    history_of(root, cache=True)
    with sqlite3.connect(root / CACHE_FILE) as db:
        assert db.execute("SELECT count(*) FROM jobs").fetchone() == (0,)
    write_build(root / "ci", START + 10 * 3600, {"[sig-node] a": "F", "[sig-node] c": "P"})
    cached = history_of(root, cache=True)
    assert columns(cached) == columns(history_of(root, cache=False))
    assert stored_job_builds(root, "ci") == [f"ci/{build.id}" for build in cached.jobs[0].builds]


CELLS, RUNS, DERIVED = "UPDATE jobs SET cells = ?", "UPDATE jobs SET runs = ?", "UPDATE derived SET state = ?"


def runs_blob(*numbers: int) -> bytes:
    """Stored runs as reports.job_grid writes them: little-endian 32-bit integers."""
    return struct.pack(f"<{len(numbers)}i", *numbers)


@pytest.mark.parametrize(("update", "stored"), [
    (CELLS, "not json"), (CELLS, "[]"), (CELLS, '[["P", "", "", "", false]]'), (CELLS, '{"cells": []}'),
    (RUNS, b""), (RUNS, b"\x01\x00\x00"), (RUNS, "text, not bytes"),
    (RUNS, runs_blob(4)),  # no row sizes
    (RUNS, runs_blob(4, 2, 2, 2, 2, 2, 2, 2, 2)),  # sizes that do not add up to the runs
    (RUNS, runs_blob(4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)),  # odd rows
    (RUNS, runs_blob(4, -2, 2, *[0] * 30)),  # a negative size
    (RUNS, runs_blob(4, *[2] * 12, *[0, 3] * 12)),  # rows narrower than the grid
    (RUNS, runs_blob(4, *[2] * 12, *[9999, 4] * 12)),  # a cell the table does not have
    (DERIVED, "not json"), (DERIVED, "[]\n[]"), (DERIVED, "{}\n[]\n[]\n[]"),
    (DERIVED, '{"keys": ["a"], "samples": [], "local": {}, "placed": {}}\n[]\n[]'),
    (DERIVED, '{"keys": ["a"], "samples": ["a"], "local": {}, "placed": {}}\n[]\n'
              '[["b", "r", "0", "test", "", false, false]]'),
    (DERIVED, '{"keys": ["a"], "samples": ["a"], "local": {}, "placed": {}}\n[]\n[["b", "r", 0, "test"]]'),
    (DERIVED, '{"x": 3}\n[]'), (DERIVED, '{"x": 0}\n[[[], "00", 1]]'),
])
def test_a_stored_grid_or_derivation_that_does_not_fit_is_made_anew(results: Path, update: str, stored: str) -> None:
    history_of(results, cache=True)
    with sqlite3.connect(results / CACHE_FILE) as db:
        db.execute(update, (stored,))
    assert columns(history_of(results, cache=True)) == columns(history_of(results, cache=False))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.lists(st.text(CODES, min_size=3, max_size=3), min_size=1, max_size=4),
       steps=st.lists(st.one_of(st.tuples(st.just("add"), st.text(CODES, min_size=1, max_size=1),
                                          st.integers(0, 4)),
                                st.tuples(st.just("drop-oldest"), st.just(""), st.just(0)),
                                st.tuples(st.just("window"), st.just(""), st.integers(0, 4))),
                      min_size=1, max_size=5))
def test_the_cached_history_follows_any_sequence_of_changes(
        tmp_path_factory: pytest.TempPathFactory, first: list[str], steps: list[tuple[str, str, int]]) -> None:
    root = tmp_path_factory.mktemp("results")
    write_job(root, "ci", {f"[sig-node] row {i}": codes for i, codes in enumerate(first)})
    started, max_builds = START + 100 * 3600, 0
    for step, code, number in steps:
        if step == "add":
            started += 3600
            write_build(root / "ci", started, {f"[sig-node] row {number}": code, "[sig-node] row 0": "P"})
        elif step == "drop-oldest" and len(list((root / "ci").iterdir())) > 2:
            remove_build(min(path for path in (root / "ci").iterdir() if path.is_dir()))
        elif step == "window":
            max_builds = number
        cached = load_history(root, now=NOW, max_builds=max_builds)
        assert columns(cached) == columns(load_history(root, now=NOW, max_builds=max_builds, cache=False))
