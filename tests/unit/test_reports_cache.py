"""The report's cache of parsed builds: the same history with and without it, re-read when a build's files change,
and never a reason for a report to fail."""

from __future__ import annotations

import filecmp
import json
import os
import sqlite3
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from winsuite_reports.analysis import ReportOptions
from winsuite_reports.analysis import build_report
from winsuite_reports.build_codec import decode_rows
from winsuite_reports.build_codec import encode_rows
from winsuite_reports.cache import CACHE_FILE
from winsuite_reports.cache import BuildCache
from winsuite_reports.cache import fingerprint
from winsuite_reports.conventions import artifacts_dir
from winsuite_reports.conventions import junit_name
from winsuite_reports.model import History
from winsuite_reports.model import RowInfo
from winsuite_reports.model import Status
from winsuite_reports.render import write_dashboard
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import CODES
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_build
from winsuite_reports.synthetic import write_job

NOW = START + 86400
ROWS = {
    "[sig-windows] pods pass": "PPPP",
    "[sig-windows] flaky one": "PKPF",
    "[sig-windows] skipped": "SSSS",
    "[sig-windows] excluded but run": "XXXX",
    "[sig-windows] new in the newest": "P___",
}
PROPERTIES = {"[sig-windows] pods pass": {"tags": "Conformance", "tier": "adapted", "category": "Core.Pods"},
              "[sig-windows] flaky one": {"ran-on": "win-0 (windows, 10.0.20348, runtime containerd://1.7.24)",
                                          "failure-class": "infrastructure", "failure-evidence": "ErrImagePull"}}


def history_of(root: Path, *, cache: bool) -> History:
    return load_history(root, now=NOW, cache=cache)


def columns(history: History) -> list[tuple[object, ...]]:
    """Everything a report reads of a history: its jobs, their rows, builds and grids, their failures clustered and
    where their rows ran."""
    return [(job.name, job.rows, job.builds, [job.cells(key) for key in job.rows], job.failures, job.placement)
            for job in history.jobs]


def remove_build(build: Path) -> None:
    for path in sorted(build.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    build.rmdir()


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    write_job(root, "ci-windows", ROWS, properties=PROPERTIES, metadata={"dashboard": "sig-windows"})
    write_job(root, "ci-linux", {"[sig-node] a": "PF"})
    return root


def test_a_cached_history_is_the_history_read_from_the_files(results: Path) -> None:
    fresh = history_of(results, cache=False)
    assert not (results / CACHE_FILE).exists()
    first = history_of(results, cache=True)
    cached = history_of(results, cache=True)
    assert (results / CACHE_FILE).is_file()
    assert columns(first) == columns(fresh) == columns(cached)
    with BuildCache(results) as store:
        build = min(path for path in (results / "ci-windows").iterdir() if path.is_dir())
        assert store.get(build, fingerprint(build)) is not None
        assert (store.hits, store.misses) == (1, 0)


def test_the_dashboard_is_byte_identical_with_and_without_the_cache(results: Path, tmp_path: Path) -> None:
    history_of(results, cache=True)  # fills the cache
    for name, cache in (("without", False), ("with", True)):
        write_dashboard(build_report(history_of(results, cache=cache), ReportOptions(), now=NOW), tmp_path / name)
    comparison = filecmp.dircmp(tmp_path / "without", tmp_path / "with")
    assert not comparison.left_only and not comparison.right_only
    _, mismatch, errors = filecmp.cmpfiles(tmp_path / "without", tmp_path / "with", comparison.common_files,
                                           shallow=False)
    assert (mismatch, errors) == ([], [])


def test_a_build_whose_files_change_is_read_again(results: Path) -> None:
    history_of(results, cache=True)
    job = results / "ci-linux"
    newest = max(path for path in job.iterdir() if path.is_dir())
    junit = artifacts_dir(newest) / junit_name(1)
    text = junit.read_text().replace('<failure message="expected the pod to be Running, found Pending"/>', "")
    junit.write_text(text)
    os.utime(junit, ns=(junit.stat().st_atime_ns, junit.stat().st_mtime_ns + 1_000_000))
    cached = {job.name: job for job in history_of(results, cache=True).jobs}
    assert cached["ci-linux"].builds[0].cells["[sig-node] a"].status is Status.PASS
    assert columns(history_of(results, cache=True)) == columns(history_of(results, cache=False))


def test_a_new_build_and_a_removed_one_are_seen(results: Path) -> None:
    history_of(results, cache=True)
    job = results / "ci-linux"
    remove_build(min(path for path in job.iterdir() if path.is_dir()))
    write_build(job, START + 10 * 3600, {"[sig-node] a": "F"})
    cached = history_of(results, cache=True)
    assert columns(cached) == columns(history_of(results, cache=False))
    linux = next(j for j in cached.jobs if j.name == "ci-linux")
    assert [build.cells["[sig-node] a"].status for build in linux.builds] == [Status.FAIL, Status.PASS]
    with sqlite3.connect(results / CACHE_FILE) as db:
        stored = {path for (path,) in db.execute("SELECT path FROM builds WHERE path LIKE 'ci-linux/%'")}
    assert stored == {f"ci-linux/{build.id}" for build in linux.builds}


def test_cells_first_read_after_the_load_come_from_the_cache_while_the_build_is_unchanged(results: Path) -> None:
    history_of(results, cache=True)
    cached = next(job for job in history_of(results, cache=True).jobs if job.name == "ci-windows")
    oldest, newest = cached.builds[-1], cached.builds[0]
    # The files are gone once the history is loaded: cells still come from the entries get() checked.
    for junit in (results / "ci-windows" / oldest.id).rglob("junit_*.xml"):
        junit.write_text("<testsuites/>")
    assert oldest.cells["[sig-windows] flaky one"].status is Status.FAIL
    # An entry rewritten since (another report, after the build changed) is not the one checked: the files decide.
    with sqlite3.connect(results / CACHE_FILE) as db:
        db.execute("UPDATE builds SET fingerprint = 'other' WHERE path = ?", (f"ci-windows/{newest.id}",))
    for junit in (results / "ci-windows" / newest.id).rglob("junit_*.xml"):
        junit.write_text("<testsuites/>")
    assert newest.cells == {}


def test_a_corrupt_cache_file_is_made_anew(results: Path) -> None:
    (results / CACHE_FILE).write_bytes(b"not a database, " * 100)
    assert columns(history_of(results, cache=True)) == columns(history_of(results, cache=False))
    with sqlite3.connect(results / CACHE_FILE) as db:
        assert db.execute("SELECT count(*) FROM builds").fetchone()[0] == 6


def test_a_cache_file_damaged_past_its_header_is_made_anew_by_the_next_report(results: Path) -> None:
    history_of(results, cache=True)
    data = bytearray((results / CACHE_FILE).read_bytes())
    page = 4096  # the first page (header and schema) stays; the pages of the entries are overwritten
    data[page:] = b"\xff" * (len(data) - page)
    (results / CACHE_FILE).write_bytes(bytes(data))
    assert columns(history_of(results, cache=True)) == columns(history_of(results, cache=False))
    history_of(results, cache=True)
    with sqlite3.connect(results / CACHE_FILE) as db:
        assert db.execute("SELECT count(*) FROM builds").fetchone()[0] == 6


def test_an_entry_that_does_not_decode_is_read_from_the_files(results: Path) -> None:
    history_of(results, cache=True)
    with sqlite3.connect(results / CACHE_FILE) as db:
        db.execute("UPDATE builds SET cells = '[1, 2, 3]', rows = '{'")
    assert columns(history_of(results, cache=True)) == columns(history_of(results, cache=False))


@pytest.mark.parametrize("change", ["UPDATE evidence SET failures = '[[1]]', ran_on = 'x'", "DELETE FROM evidence"])
def test_stored_evidence_that_does_not_decode_or_is_gone_is_read_from_the_files(results: Path, change: str) -> None:
    history_of(results, cache=True)
    with sqlite3.connect(results / CACHE_FILE) as db:
        db.execute(change)
        db.execute("DELETE FROM derived")  # made anew: from every build's evidence
    assert columns(history_of(results, cache=True)) == columns(history_of(results, cache=False))


def test_stored_rows_that_do_not_decode_are_read_from_the_files(results: Path) -> None:
    history_of(results, cache=True)
    with sqlite3.connect(results / CACHE_FILE) as db:
        db.execute("UPDATE builds SET rows = '{\"x\": 1}'")
    assert columns(history_of(results, cache=True)) == columns(history_of(results, cache=False))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_results_root_that_cannot_be_written_is_read_without_a_cache(results: Path) -> None:
    results.chmod(0o555)
    try:
        assert columns(history_of(results, cache=True)) == columns(history_of(results, cache=False))
        assert not (results / CACHE_FILE).exists()
    finally:
        results.chmod(0o755)


def test_a_directory_where_the_cache_file_belongs_leaves_the_report_uncached(results: Path) -> None:
    (results / CACHE_FILE).mkdir()
    assert columns(history_of(results, cache=True)) == columns(history_of(results, cache=False))
    assert (results / CACHE_FILE).is_dir()


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


FACT = st.text(max_size=6)  # any character: the codec's separators and its JSON mark among them


@settings(max_examples=200, deadline=None)
@given(facts=st.dictionaries(FACT, st.tuples(st.lists(FACT, max_size=3), FACT, FACT, st.lists(FACT, max_size=2),
                                             FACT, FACT, FACT), max_size=5))
def test_stored_row_facts_read_back_as_they_were(facts: dict[str, tuple[list[str], str, str, list[str], str, str,
                                                                          str]]) -> None:
    rows = {key: RowInfo(key, tuple(tags), tier, category, tuple(items), excluded, engine, case)
            for key, (tags, tier, category, items, excluded, engine, case) in facts.items()}
    assert decode_rows(encode_rows(rows)) == rows


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


def test_a_job_removed_from_the_root_is_forgotten(results: Path) -> None:
    history_of(results, cache=True)
    linux = results / "ci-linux"
    for build in [path for path in linux.iterdir() if path.is_dir()]:
        remove_build(build)
    for path in linux.iterdir():
        path.unlink()
    linux.rmdir()
    history_of(results, cache=True)
    with sqlite3.connect(results / CACHE_FILE) as db:
        builds = {path.partition("/")[0] for (path,) in db.execute("SELECT path FROM builds")}
        evidence = {path.partition("/")[0] for (path,) in db.execute("SELECT path FROM evidence")}
        jobs = {path for (path,) in db.execute("SELECT path FROM jobs")}
        derived = {path for (path,) in db.execute("SELECT path FROM derived")}
    assert builds == evidence == jobs == derived == {"ci-windows"}


@pytest.mark.parametrize("change", ["started.json", "finished.json", "artifacts/metadata.json",
                                    "artifacts/e2e/junit_02.xml", "artifacts/junit_01.xml"])
def test_the_fingerprint_follows_every_file_the_build_is_read_from(tmp_path: Path, change: str) -> None:
    build = tmp_path / "ci" / write_build(tmp_path / "ci", START, {"[sig-node] a": "P"})
    (build / "artifacts" / "e2e").mkdir()
    (build / "artifacts" / "e2e" / "junit_02.xml").write_text("<testsuites/>")
    before = fingerprint(build)
    (build / "artifacts" / "build-log.txt").write_text("not read by the parser")
    assert fingerprint(build) == before
    path = build / change
    path.write_bytes(path.read_bytes() + b" ")
    changed = fingerprint(build)
    assert changed != before
    path.unlink()
    assert fingerprint(build) not in (before, changed)


LONG_HISTORY = """
import os, sys
from pathlib import Path
from winsuite_reports import split
from winsuite_reports.conventions import artifacts_dir, junit_name
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import START, write_build, write_job
root = Path(sys.argv[1])
copies = []

class Recorded(split.Beside):
    def __init__(self, compute, *, split):
        copies.append(split)
        super().__init__(compute, split=split)

split.Beside = Recorded
write_job(root, "ci-long", {"[sig-node] a": "PF" * 35, "[sig-node] b": "P" * 70})
load_history(root, now=START + 86400 * 7)  # fills the cache
write_build(root / "ci-long", START + 70 * 3600, {"[sig-node] a": "F", "[sig-node] b": "P", "[sig-node] c": "S"})
oldest = min(path for path in (root / "ci-long").iterdir() if path.is_dir())
junit = artifacts_dir(oldest) / junit_name(1)
junit.write_text(junit.read_text().replace('name="[It] [sig-node] b"', 'name="[It] [sig-node] d"'))
os.utime(junit, ns=(junit.stat().st_atime_ns, junit.stat().st_mtime_ns + 1_000_000))

def seen(cache):
    job = load_history(root, now=START + 86400 * 7, cache=cache).jobs[0]
    return [(build.id, sorted((key, cell.status.value) for key, cell in build.cells.items())) for build in job.builds]

cached, fresh = seen(True), seen(False)
assert cached == fresh, "the cached history differs"
assert ("[sig-node] d", "P") in dict(fresh)[oldest.name], "the rewritten build was not read again"
print(copies)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fingerprints are taken beside the parse only where fork exists")
def test_a_long_history_fingerprinted_beside_its_new_build_is_the_history_read_from_the_files(tmp_path: Path) -> None:
    """71 builds, one new and one rewritten since the cache was filled: the fingerprints are taken by a forked copy
    (when a second CPU is there) while the new build is parsed, and the rewritten build is still read again. In a
    process of its own: a test session's threads forbid a fork."""
    done = subprocess.run([sys.executable, "-c", LONG_HISTORY, str(tmp_path / "results")], check=False,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "[False, True]"  # the first report parses all; the next only the new one
