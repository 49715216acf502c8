"""The report's cache of parsed builds: the same history with and without it, re-read when a build's files change,
and never a reason for a report to fail."""

from __future__ import annotations

import filecmp
import os
import sqlite3
from pathlib import Path

import pytest

from winsuite_reports.analysis import ReportOptions
from winsuite_reports.analysis import build_report
from winsuite_reports.cache import CACHE_FILE
from winsuite_reports.cache import BuildCache
from winsuite_reports.cache import fingerprint
from winsuite_reports.conventions import artifacts_dir
from winsuite_reports.conventions import junit_name
from winsuite_reports.model import History
from winsuite_reports.model import Status
from winsuite_reports.render import write_dashboard
from winsuite_reports.results import load_history
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
PROPERTIES = {"[sig-windows] pods pass": {"tags": "Conformance", "tier": "adapted", "category": "Core.Pods"}}


def history_of(root: Path, *, cache: bool) -> History:
    return load_history(root, now=NOW, cache=cache)


def columns(history: History) -> list[tuple[object, ...]]:
    return [(job.name, job.rows, job.builds) for job in history.jobs]


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
    oldest = min(path for path in job.iterdir() if path.is_dir())
    for path in sorted(oldest.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    oldest.rmdir()
    write_build(job, START + 10 * 3600, {"[sig-node] a": "F"})
    cached = history_of(results, cache=True)
    assert columns(cached) == columns(history_of(results, cache=False))
    linux = next(j for j in cached.jobs if j.name == "ci-linux")
    assert [build.cells["[sig-node] a"].status for build in linux.builds] == [Status.FAIL, Status.PASS]
    with sqlite3.connect(results / CACHE_FILE) as db:
        stored = {path for (path,) in db.execute("SELECT path FROM builds WHERE path LIKE 'ci-linux/%'")}
    assert stored == {f"ci-linux/{build.id}" for build in linux.builds}


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
