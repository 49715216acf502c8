"""A real run's build published to both object stores and reported from them (the same rows as from disk), and a
native and an upstream run of the same focus on the embedded cluster compared spec by spec."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.remote_results import builds_shown
from tests.integration.remote_results import differences
from tests.integration.remote_results import report
from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import only_build
from tests.tools import gcs_server
from tests.tools import s3_server
from tests.tools.embedded_cluster import EmbeddedCluster
from tests.tools.go_programs import GoMissing
from winsuite.components import images
from winsuite.errors import ExitCode

pytestmark = pytest.mark.cluster

# Specs winsuite has ports of, which e2e.test also runs on the real node: the same focus on both engines. (Not the
# envFrom specs: upstream's `sh -c env` loses `data-1` in the embedded node's busybox, whose ash predates 1.36.)
FOCUS = (r"\[sig-node\] Pods should (get a host IP|be submitted and removed) "
         r"|\[sig-node\] ConfigMap should be consumable via environment variable "
         r"|\[sig-node\] Secrets should be consumable from pods in env vars ")


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Both object stores, each with a bucket `ci-logs`, and the environment that points the clients at them."""
    missing = s3_server.missing_prerequisite()
    if missing:
        pytest.skip(missing)
    try:
        gcs_binary = gcs_server.build()
    except GoMissing as err:
        pytest.skip(str(err))
    with s3_server.running(tmp_path_factory.mktemp("s3"), s3_server.build()) as s3, \
            gcs_server.start(tmp_path_factory.mktemp("gcs"), gcs_binary) as gcs:
        s3.make_bucket("ci-logs")
        gcs.create_bucket("ci-logs")
        yield {"AWS_ENDPOINT_URL": s3.endpoint, "AWS_ACCESS_KEY_ID": s3_server.ACCESS_KEY,
               "AWS_SECRET_ACCESS_KEY": s3_server.SECRET_KEY, "AWS_EC2_METADATA_DISABLED": "true",
               "AWS_REGION": "us-east-1", "NO_GCE_CHECK": "true", **gcs.client_env()}


def run(cluster: dict[str, Path], root: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [*WINSUITE, "run", "--kubeconfig", str(cluster["kubeconfig"]), "--results-root", str(root),
            "--node-os", "linux", "--repo-list", str(cluster["repo-list"]), "-n", "2", "--job", "embedded-linux",
            "--focus", FOCUS, *extra]
    done = subprocess.run(argv, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=1800,
                          check=False)
    assert done.returncode in (ExitCode.OK, ExitCode.TESTS_FAILED), done.stdout + done.stderr
    return done


def test_a_real_run_published_to_both_stores_reports_the_same_rows_and_compares_with_upstream(
    real_node: EmbeddedCluster, stores: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:
    """A native run published to S3 and GCS reports the rows it reports from disk, and compares with an upstream run
    of the same specs. The wait is the two whole runs of the focus on the real node, one after the other: the native
    one, then the upstream one with e2e.test's start."""
    env = {**os.environ, **stores}  # the runs use winsuite's cache (e2e.test), the reports a mirror of their own
    # Both paths live in winsuite's cache: resolved before the reports' cache replaces it in this process.
    cluster = {"kubeconfig": real_node.kubeconfig, "repo-list": images.repo_list_file()}
    for name, value in {**stores, "WINSUITE_CACHE_DIR": str(tmp_path / "cache")}.items():
        monkeypatch.setenv(name, value)
    native = run(cluster, tmp_path / "native", env, "--engine", "native", "--publish", "s3://ci-logs/logs")
    assert "winsuite publish: s3://ci-logs/logs/" in native.stdout, native.stdout + native.stderr
    build = only_build(tmp_path / "native").path
    published = subprocess.run([*WINSUITE, "publish", str(build), "gs://ci-logs/logs"], env=env, capture_output=True,
                               text=True, timeout=300, check=False)
    assert published.returncode == ExitCode.OK, published.stderr

    for location, output in ((str(tmp_path / "native"), "local"), ("s3://ci-logs/logs", "s3"),
                             ("gs://ci-logs/logs", "gcs")):
        assert report([location], tmp_path / output, monkeypatch) == ExitCode.OK
    assert builds_shown(tmp_path / "local") == {build.parent.name: 1}
    assert differences(tmp_path / "local", tmp_path / "s3") == []
    assert differences(tmp_path / "local", tmp_path / "gcs") == []

    run(cluster, tmp_path / "upstream", env, "--engine", "upstream")
    upstream = only_build(tmp_path / "upstream").path
    capsys.readouterr()
    s3_build = f"s3://ci-logs/logs/{build.parent.name}/{build.name}"
    from winsuite.cli import main

    assert main(["report", "--compare", s3_build, str(upstream), "--format", "markdown"]) == ExitCode.OK
    markdown = capsys.readouterr().out
    assert f"### Comparison: A {s3_build}" in markdown
    lines = markdown.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| failed only in A |"))
    totals = dict(zip(lines[header].strip("| ").split(" | "), map(int, lines[header + 2].strip("| ").split(" | ")),
                      strict=True))
    # The same specs ran on both engines, and ports give their twins' verdicts.
    assert totals["passed in both"] >= 4 and totals["ran only in A"] == totals["ran only in B"] == 0, markdown
    assert "| Kubernetes | v1.36.3 | v1.36.3 |" in markdown
