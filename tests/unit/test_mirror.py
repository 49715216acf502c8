"""A remote root's local mirror, over a directory served as a store: what a prefix is (root, job, build), which
files are fetched, which builds need no request at all, and what goes when the store no longer has it."""

from __future__ import annotations

import collections
import shutil
from pathlib import Path

import pytest

from winsuite_reports.mirror import Kind
from winsuite_reports.mirror import Mirror
from winsuite_reports.mirror import wanted
from winsuite_reports.store import Level
from winsuite_reports.store import StoredObject
from winsuite_reports.store import parse_remote
from winsuite_reports.store_dir import DirectoryStore
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_job


class CountingStore(DirectoryStore):
    """A directory as a store that counts the requests made of it."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.calls: collections.Counter[str] = collections.Counter()

    def list_level(self, prefix: str) -> Level:
        self.calls["list"] += 1
        return super().list_level(prefix)

    def list_files(self, prefix: str) -> list[StoredObject]:
        self.calls["list"] += 1
        return super().list_files(prefix)

    def read(self, key: str) -> bytes:
        self.calls["read"] += 1
        return super().read(key)


@pytest.fixture
def bucket(tmp_path: Path) -> Path:
    root = tmp_path / "bucket" / "logs"
    write_job(root, "ci-a", {"t1": "PPF", "t2": "PSP"})
    write_job(root, "ci-b", {"t1": "PP"})
    (root / "ci-a").joinpath(sorted(p.name for p in (root / "ci-a").iterdir() if p.is_dir())[0],
                             "build-log.txt").write_text("not read by the dashboard")
    return tmp_path / "bucket"


def test_only_the_files_the_dashboard_reads_are_wanted() -> None:
    assert all(wanted(f) for f in ("started.json", "finished.json", "artifacts/metadata.json",
                                   "artifacts/junit_01.xml", "artifacts/shards/01/junit_02.xml"))
    assert not any(wanted(f) for f in ("build-log.txt", "artifacts/pod/pod.yaml", "metadata.json"))


@pytest.mark.parametrize(("prefix", "kind", "local"), [
    ("logs", Kind.ROOT, "logs"), ("logs/ci-a", Kind.JOB, "ci-a"), ("logs/ci-b/{build}", Kind.BUILD, "ci-b/{build}")])
def test_a_prefix_is_a_root_a_job_or_a_build(bucket: Path, tmp_path: Path, prefix: str, kind: Kind, local: str) -> None:
    build = sorted(p.name for p in (bucket / "logs" / "ci-b").iterdir() if p.is_dir())[0]
    root = parse_remote(f"s3://bucket/{prefix.format(build=build)}")
    mirrored = Mirror(CountingStore(bucket), root, tmp_path / "mirror").sync()
    assert mirrored.kind is kind
    assert mirrored.path == tmp_path / "mirror" / local.format(build=build)
    assert mirrored.unread == []


def test_a_settled_build_costs_no_request_and_a_gone_one_leaves_the_mirror(bucket: Path, tmp_path: Path) -> None:
    store = CountingStore(bucket)
    root = parse_remote("s3://bucket/logs")
    mirrored = Mirror(store, root, tmp_path / "mirror").sync()
    files = sorted(p.relative_to(mirrored.path).as_posix() for p in mirrored.path.rglob("*") if p.is_file())
    assert not any(f.endswith("build-log.txt") for f in files)
    assert store.calls["read"] == 5 * 4  # five builds, four files each
    store.calls.clear()
    Mirror(store, root, tmp_path / "mirror").sync()
    assert store.calls == {"list": 1 + 1 + 1}  # the root and each job (what it is, and its builds): no build
    gone = sorted(p for p in (bucket / "logs" / "ci-a").iterdir() if p.is_dir())[0]
    shutil.rmtree(gone)
    Mirror(store, root, tmp_path / "mirror").sync()
    assert not (mirrored.path / "ci-a" / gone.name).exists()


def test_max_builds_and_since_bound_what_is_fetched(bucket: Path, tmp_path: Path) -> None:
    store = CountingStore(bucket)
    Mirror(store, parse_remote("s3://bucket/logs/ci-a"), tmp_path / "m1").sync(max_builds=1)
    assert store.calls["read"] == 4
    store.calls.clear()
    Mirror(store, parse_remote("s3://bucket/logs/ci-a"), tmp_path / "m2", workers=1).sync(since=START + 3600)
    assert store.calls["read"] == 3 * 4  # the two builds since, and the first older one that stops the walk
