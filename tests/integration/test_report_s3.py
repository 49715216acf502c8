"""`winsuite report --results s3://…` and `winsuite publish … s3://…` against a real S3 server (versitygw, built
from the Go module proxy, tests/tools/s3_server.py): the dashboard from the bucket is byte for byte the one from the
same tree on disk, a new build costs only its objects (counted at the server), and each failure of the store is one
line with its exit code."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.remote_results import JOBS
from tests.integration.remote_results import builds_shown
from tests.integration.remote_results import check_stopped_mid_report
from tests.integration.remote_results import differences
from tests.integration.remote_results import new_build
from tests.integration.remote_results import report
from tests.integration.remote_results import stop_store_mid_report
from tests.integration.remote_results import write_history
from tests.tools import s3_server
from winsuite.errors import ExitCode
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_build

BUCKET = "ci-logs"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[s3_server.S3Server]:
    missing = s3_server.missing_prerequisite()
    if missing:
        pytest.skip(missing)
    with s3_server.running(tmp_path_factory.mktemp("s3"), s3_server.build()) as running:
        yield running


@pytest.fixture(scope="module")
def history(server: s3_server.S3Server, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    """The 200-build tree on disk, and the same in a public bucket under logs/."""
    tree = tmp_path_factory.mktemp("tree") / "logs"
    ids = write_history(tree)
    server.make_bucket(BUCKET, public=True)
    server.upload_tree(BUCKET, "logs", tree)
    return tree, ids


@pytest.fixture
def s3_env(server: s3_server.S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The AWS chain pointed at the test server, with no credentials (a public bucket is read unsigned)."""
    env = {"AWS_ENDPOINT_URL": server.endpoint, "AWS_EC2_METADATA_DISABLED": "true",
           "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-credentials"), "AWS_REGION": "us-east-1",
           "WINSUITE_CACHE_DIR": str(tmp_path.parent / "winsuite-cache")}
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def test_the_dashboard_from_the_bucket_is_the_one_from_disk_and_a_new_build_costs_its_objects(
    server: s3_server.S3Server, history: tuple[Path, dict[str, list[str]]], s3_env: dict[str, str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tree, ids = history
    assert report([f"s3://{BUCKET}/logs"], tmp_path / "remote", monkeypatch) == ExitCode.OK
    assert report([str(tree)], tmp_path / "local", monkeypatch) == ExitCode.OK
    assert differences(tmp_path / "local", tmp_path / "remote") == []
    assert builds_shown(tmp_path / "remote") == JOBS

    job = "ci-windows-2022"
    build = new_build(tree, job, ids)
    wanted = server.upload_tree(BUCKET, f"logs/{job}/{build}", tree / job / build)
    before = server.requests()
    assert report([f"s3://{BUCKET}/logs"], tmp_path / "remote-2", monkeypatch) == ExitCode.OK
    made = server.requests() - before
    # Listed: the root, each job, the new build, and the build that had no finished.json yet; fetched: the new
    # build's four files, nothing else.
    assert made == {"s3_ListObjectsV2": 1 + len(JOBS) + 2, "s3_GetObject": wanted}, made
    assert report([str(tree)], tmp_path / "local-2", monkeypatch) == ExitCode.OK
    assert differences(tmp_path / "local-2", tmp_path / "remote-2") == []
    capsys.readouterr()


def test_a_missing_bucket_is_one_line_and_the_other_roots_render(
    history: tuple[Path, dict[str, list[str]]], s3_env: dict[str, str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tree, _ = history
    local_job = tree / "ci-windows-2025"
    code = report(["s3://no-such-bucket/logs", str(local_job)], tmp_path / "out", monkeypatch)
    assert code == ExitCode.RESULTS_BUCKET_MISSING
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("winsuite report: error:")]
    assert len(errors) == 1 and errors[0].startswith("winsuite report: error: s3://no-such-bucket/logs: no such bucket")
    assert builds_shown(tmp_path / "out") == {"ci-windows-2025": JOBS["ci-windows-2025"]}


def test_a_private_bucket_read_without_credentials_is_access_denied(
    server: s3_server.S3Server, s3_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:
    server.make_bucket("private-logs")
    write_build(tmp_path / "tree" / "ci-private", START, {"a": "P"})
    server.upload_tree("private-logs", "logs", tmp_path / "tree")
    assert report(["s3://private-logs/logs"], tmp_path / "out", monkeypatch) == ExitCode.RESULTS_ACCESS_DENIED
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("winsuite report: error:")]
    assert len(errors) == 1 and "access denied" in errors[0] and "no AWS credentials found" in errors[0], errors
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", s3_server.ACCESS_KEY)  # the AWS chain's first source
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", s3_server.SECRET_KEY)
    assert report(["s3://private-logs/logs"], tmp_path / "out", monkeypatch) == ExitCode.OK


def test_a_server_stopped_mid_report_leaves_the_builds_read_and_names_the_rest(
    server: s3_server.S3Server, tmp_path: Path, s3_env: dict[str, str], history: tuple[Path, dict[str, list[str]]]
) -> None:
    tree, _ = history
    with s3_server.running(tmp_path / "s3", server.binary) as doomed:
        doomed.make_bucket(BUCKET, public=True)
        doomed.upload_tree(BUCKET, "logs", tree)
        env = {**os.environ, **s3_env, "AWS_ENDPOINT_URL": doomed.endpoint,
               "WINSUITE_CACHE_DIR": str(tmp_path / "cold-cache")}
        argv = [sys.executable, "-m", "winsuite.cli", "report", "--results", f"s3://{BUCKET}/logs",
                "--output", str(tmp_path / "out")]
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def stop() -> None:
            doomed.process.send_signal(signal.SIGKILL)
            doomed.process.wait()

        code, err = stop_store_mid_report(proc, lambda: doomed.requests()["s3_GetObject"] >= 150, stop)
    check_stopped_mid_report(code, err, tmp_path / "out", tree)


def test_throttling_is_retried_with_backoff(
    server: s3_server.S3Server, tmp_path: Path, s3_env: dict[str, str], history: tuple[Path, dict[str, list[str]]],
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that answers 503 SlowDown beyond two requests at once, read by eight workers: the refused requests
    are retried with backoff and the report is the one from disk."""
    tree, _ = history
    with s3_server.running(tmp_path / "s3", server.binary, max_requests=2) as busy:
        busy.make_bucket(BUCKET, public=True)
        busy.upload_tree(BUCKET, "logs", tree)
        monkeypatch.setenv("AWS_ENDPOINT_URL", busy.endpoint)
        assert report([f"s3://{BUCKET}/logs"], tmp_path / "remote", monkeypatch) == ExitCode.OK
        assert busy.throttled() > 0
    assert report([str(tree)], tmp_path / "local", monkeypatch) == ExitCode.OK
    assert differences(tmp_path / "local", tmp_path / "remote") == []


def test_a_publish_interrupted_and_retried_ends_with_one_complete_build(
    server: s3_server.S3Server, s3_env: dict[str, str], tmp_path: Path
) -> None:
    build_dir = tmp_path / "results" / "ci-publish" / write_build(tmp_path / "results" / "ci-publish", START,
                                                                   {"a": "P", "b": "F"})
    for n in range(300):  # diagnostics enough for the upload to be cut in the middle
        (build_dir / "artifacts" / f"case-{n:03d}").mkdir()
        (build_dir / "artifacts" / f"case-{n:03d}" / "pod.yaml").write_text(f"kind: Pod\nname: case-{n}\n")
    server.make_bucket("published")
    env = {**os.environ, **s3_env, "AWS_ACCESS_KEY_ID": s3_server.ACCESS_KEY,
           "AWS_SECRET_ACCESS_KEY": s3_server.SECRET_KEY}
    argv = [sys.executable, "-m", "winsuite.cli", "publish", str(build_dir), "s3://published/logs"]
    before = server.requests()["s3_PutObject"]
    first = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while server.requests()["s3_PutObject"] - before < 60 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=60)
    keys = {obj.object_name for obj in server.client().list_objects("published", prefix="logs/", recursive=True)}
    prefix = f"logs/ci-publish/{build_dir.name}/"
    assert f"{prefix}started.json" in keys and f"{prefix}finished.json" not in keys  # cut in the middle
    assert "logs/ci-publish/latest-build.txt" not in keys

    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == ExitCode.OK, done.stderr
    assert "already there; latest-build.txt names it" in done.stdout
    client = server.client()
    local = {p.relative_to(build_dir).as_posix(): p.read_bytes() for p in build_dir.rglob("*") if p.is_file()}
    held = {obj.object_name.removeprefix(prefix): obj.object_name
            for obj in client.list_objects("published", prefix=prefix, recursive=True)}
    assert held.keys() == local.keys()
    assert all(client.get_object("published", key).read() == local[name] for name, key in held.items())
    assert client.get_object("published", "logs/ci-publish/latest-build.txt").read() == build_dir.name.encode()


def test_a_publish_without_credentials_is_access_denied_in_one_line(
    server: s3_server.S3Server, s3_env: dict[str, str], tmp_path: Path
) -> None:
    server.make_bucket("closed")
    build_dir = tmp_path / "results" / "ci-closed" / write_build(tmp_path / "results" / "ci-closed", START, {"a": "P"})
    done = subprocess.run([sys.executable, "-m", "winsuite.cli", "publish", str(build_dir), "s3://closed/logs"],
                          env={**os.environ, **s3_env}, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == ExitCode.RESULTS_ACCESS_DENIED, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "access denied" in done.stderr and "publish again to finish it" in done.stderr
