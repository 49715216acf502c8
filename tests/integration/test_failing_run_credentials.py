"""A run whose tests all fail (their images do not exist) still writes each failure's diagnostics, and the
credential scan it ends with finds none of the cluster's credentials in the build or the dashboard."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import only_build
from tests.integration.runner_support import run_namespaces
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.errors import ExitCode

pytestmark = pytest.mark.cluster

# Loopback, port 1: nothing listens, so every pull fails at once and no name is ever resolved.
NOWHERE = "127.0.0.1:1/missing"
REPO_LIST_KEYS = ("promoterE2eRegistry", "gcRegistry", "gcEtcdRegistry", "buildImageRegistry",
                  "sigStorageRegistry", "dockerLibraryRegistry")
FOCUS = r"Downward API should provide pod name, namespace and IP address|Pods should get a host IP"
PLANTED = "planted-cluster-secret-7f3a9c"


def test_a_run_whose_images_do_not_exist_keeps_diagnostics_and_leaks_no_credential(
    real_node: EmbeddedCluster, tmp_path: Path
) -> None:
    """Two tests whose images point where nothing listens fail with their diagnostics kept, and the scan finds neither
    the planted Secret nor the kubeconfig's client key. The wait is the per-test timeout of 90 s both tests reach at
    once: their pods never start, and the ports would wait 3 min for them."""
    core = client.CoreV1Api(real_node.api)
    secret = client.V1Secret(metadata=client.V1ObjectMeta(name="winsuite-planted", namespace="default"),
                             string_data={"password": PLANTED})
    core.create_namespaced_secret("default", secret)
    try:
        repo_list = tmp_path / "repo-list.yaml"
        repo_list.write_text("".join(f"{key}: {NOWHERE}\n" for key in REPO_LIST_KEYS))
        done = subprocess.run(
            [*WINSUITE, "run", "--job", "embedded", "--kubeconfig", str(real_node.kubeconfig), "--node-os", "linux",
             "--focus", FOCUS,
             "--repo-list", str(repo_list), "--test-timeout", "90s", "-n", "2",
             "--results-root", str(tmp_path / "results")],
            cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=900, check=False)
    finally:
        core.delete_namespaced_secret("winsuite-planted", "default")
    output = done.stdout + done.stderr
    assert done.returncode == ExitCode.TESTS_FAILED, output
    build = only_build(tmp_path / "results")
    rows = build.rows()
    assert len(rows) == 2 and all(row.status == "failed" for row in rows), [(r.name, r.status) for r in rows]
    for row in rows:
        diagnostics = build.path / row.properties["diagnostics"]
        assert (diagnostics / "pods.yaml").is_file() and (diagnostics / "events.yaml").is_file(), row.name
        assert NOWHERE in (diagnostics / "pods.yaml").read_text()  # the image that could not be pulled

    assert build.finished["metadata"]["credential-scan"] == "clean", output
    assert "credential scan of the build:" in output and "nothing found" in output, output
    assert "Secrets were not looked for" not in output, output  # the planted Secret was among the values
    client_key = base64.b64decode(_client_key_data(real_node.kubeconfig))
    assert (tmp_path / "results" / "_dashboard" / "index.html").is_file(), output  # in the root it was given
    for path in (tmp_path / "results").rglob("*"):  # what is published: the build and the dashboard
        if path.is_file():
            data = path.read_bytes()
            assert PLANTED.encode() not in data, path
            assert client_key.splitlines()[1] not in data, path
    assert run_namespaces(real_node, build.finished["metadata"]["run-id"]) == []


def _client_key_data(kubeconfig: Path) -> str:
    doc = yaml.safe_load(kubeconfig.read_text())
    return str(doc["users"][0]["user"]["client-key-data"])
