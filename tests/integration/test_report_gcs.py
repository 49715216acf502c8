"""`winsuite report --results gs://…` and `winsuite publish … gs://…` against a real server of GCS's JSON API
(fake-gcs-server, built from the Go module proxy, tests/tools/gcs_server.py): the dashboard from the bucket is byte
for byte the one from the same tree on disk, also after a new build; a missing bucket and a server stopped
mid-report are one line each with their exit code."""

from __future__ import annotations

import os
import subprocess
import sys
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
from tests.tools import gcs_server
from tests.tools.go_programs import GoMissing
from winsuite.errors import ExitCode

BUCKET = "ci-logs"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gcs_server.GcsServer]:
    try:
        binary = gcs_server.build()
    except GoMissing as err:
        pytest.skip(str(err))
    with gcs_server.start(tmp_path_factory.mktemp("gcs"), binary) as running:
        yield running


@pytest.fixture(scope="module")
def history(server: gcs_server.GcsServer, tmp_path_factory: pytest.TempPathFactory
            ) -> tuple[Path, dict[str, list[str]]]:
    tree = tmp_path_factory.mktemp("tree") / "logs"
    ids = write_history(tree)
    server.create_bucket(BUCKET)
    server.upload_tree(BUCKET, "logs", tree)
    return tree, ids


@pytest.fixture
def gcs_env(server: gcs_server.GcsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = {**server.client_env(), "NO_GCE_CHECK": "true", "WINSUITE_CACHE_DIR": str(tmp_path / "winsuite-cache")}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def test_the_dashboard_from_the_bucket_is_the_one_from_disk_also_after_a_new_build(
    server: gcs_server.GcsServer, history: tuple[Path, dict[str, list[str]]], gcs_env: dict[str, str],
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree, ids = history
    assert report([f"gs://{BUCKET}/logs"], tmp_path / "remote", monkeypatch) == ExitCode.OK
    assert report([str(tree)], tmp_path / "local", monkeypatch) == ExitCode.OK
    assert differences(tmp_path / "local", tmp_path / "remote") == []
    assert builds_shown(tmp_path / "remote") == JOBS
    job = "ci-windows-2025"
    build = new_build(tree, job, ids)
    server.upload_tree(BUCKET, f"logs/{job}/{build}", tree / job / build)
    assert report([f"gs://{BUCKET}/logs"], tmp_path / "remote-2", monkeypatch) == ExitCode.OK
    assert report([str(tree)], tmp_path / "local-2", monkeypatch) == ExitCode.OK
    assert differences(tmp_path / "local-2", tmp_path / "remote-2") == []
    assert builds_shown(tmp_path / "remote-2")[job] == JOBS[job] + 1


def test_a_job_prefix_and_a_build_prefix_read_as_a_job(
    history: tuple[Path, dict[str, list[str]]], gcs_env: dict[str, str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    _, ids = history
    build = ids["ci-windows-2025"][1]
    code = report([f"gs://{BUCKET}/logs/ci-windows-2022", f"gs://{BUCKET}/logs/ci-windows-2025/{build}"],
                  tmp_path / "out", monkeypatch)
    assert code == ExitCode.OK
    assert builds_shown(tmp_path / "out") == {"ci-windows-2022": JOBS["ci-windows-2022"], "ci-windows-2025": 1}


def test_a_missing_bucket_is_one_line(
    gcs_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert report(["gs://no-such-bucket/logs"], tmp_path / "out", monkeypatch) == ExitCode.RESULTS_BUCKET_MISSING
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("winsuite report: error:")]
    assert len(errors) == 1 and errors[0].startswith("winsuite report: error: gs://no-such-bucket/logs: no such bucket")


def test_a_server_stopped_mid_report_leaves_the_builds_read_and_names_the_rest(
    tmp_path: Path, history: tuple[Path, dict[str, list[str]]], gcs_env: dict[str, str]
) -> None:
    tree, _ = history
    with gcs_server.start(tmp_path / "gcs", gcs_server.build()) as doomed:
        doomed.create_bucket(BUCKET)
        doomed.upload_tree(BUCKET, "logs", tree)
        cache = tmp_path / "cold-cache"
        env = {**os.environ, **gcs_env, **doomed.client_env(), "WINSUITE_CACHE_DIR": str(cache)}
        argv = [sys.executable, "-m", "winsuite.cli", "report", "--results", f"gs://{BUCKET}/logs",
                "--output", str(tmp_path / "out")]
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def stop() -> None:
            doomed.process.kill()
            doomed.process.wait()

        code, err = stop_store_mid_report(  # stopped once 150 files are in the mirror
            proc, lambda: sum(1 for p in cache.rglob("*.json") if p.is_file()) >= 150, stop)
    check_stopped_mid_report(code, err, tmp_path / "out", tree)
