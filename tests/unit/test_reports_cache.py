"""The report's cache of parsed builds: the same history with and without it, re-read when a build's files change,
and never a reason for a report to fail."""

from __future__ import annotations

import filecmp
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.tools.report_histories import NOW
from tests.tools.report_histories import columns
from tests.tools.report_histories import history_of
from tests.tools.report_histories import remove_build
from tests.tools.report_histories import write_histories
from winsuite_reports.analysis import ReportOptions
from winsuite_reports.analysis import build_report
from winsuite_reports.build_codec import decode_rows
from winsuite_reports.build_codec import encode_rows
from winsuite_reports.cache import CACHE_FILE
from winsuite_reports.cache import BuildCache
from winsuite_reports.cache import fingerprint
from winsuite_reports.conventions import artifacts_dir
from winsuite_reports.conventions import junit_name
from winsuite_reports.conventions import tags_in_name
from winsuite_reports.model import RowInfo
from winsuite_reports.model import Status
from winsuite_reports.render import write_dashboard
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_build


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return write_histories(tmp_path / "results")


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


FACT = st.text(max_size=6)  # any character: the codec's separators and its JSON mark among them


@settings(max_examples=200, deadline=None)
@given(facts=st.dictionaries(FACT, st.tuples(st.lists(FACT, max_size=3), FACT, FACT, st.lists(FACT, max_size=2),
                                             FACT, FACT, FACT), max_size=5))
def test_stored_row_facts_read_back_as_they_were(facts: dict[str, tuple[list[str], str, str, list[str], str, str,
                                                                          str]]) -> None:
    rows = {key: RowInfo(key, tuple(tags), tier, category, tuple(items), excluded, engine, case)
            for key, (tags, tier, category, items, excluded, engine, case) in facts.items()}
    assert decode_rows(encode_rows(rows)) == rows


@settings(max_examples=200, deadline=None)
@given(names=st.lists(st.one_of(FACT, st.sampled_from(["[sig-node] a [Conformance]", "b [Slow] [LinuxOnly]"])),
                      max_size=5, unique=True),
       others=st.dictionaries(FACT, st.tuples(FACT, FACT, st.lists(FACT, max_size=2)), max_size=3))
def test_rows_known_plain_read_back_with_the_facts_of_their_names(
        names: list[str], others: dict[str, tuple[str, str, list[str]]]) -> None:
    rows = {name: RowInfo(name, tags_in_name(name)) for name in names}  # a parse's plain passes come first
    rows.update((key, RowInfo(key, (), tier, category, tuple(items)))
                for key, (tier, category, items) in others.items() if key not in rows)
    assert decode_rows(encode_rows(rows, plain=len(names))) == rows


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
