"""A run with credentials that may not do what a run needs (a service account bound to nothing): a usage error that
names what the API server refused and to whom, and a build whose finished.json says so; never an internal error."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import only_build
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.errors import ExitCode

pytestmark = pytest.mark.cluster

NAMESPACE = "winsuite-limited"
ACCOUNT = "limited"


@pytest.fixture
def limited_kubeconfig(cluster: EmbeddedCluster, tmp_path: Path) -> Iterator[Path]:
    """The cluster's kubeconfig with its user replaced by a token of a service account no role is bound to."""
    core = client.CoreV1Api(cluster.api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NAMESPACE)))
    try:
        core.create_namespaced_service_account(NAMESPACE, client.V1ServiceAccount(
            metadata=client.V1ObjectMeta(name=ACCOUNT)))
        token = core.create_namespaced_service_account_token(ACCOUNT, NAMESPACE, {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600}}).status.token
        config = yaml.safe_load(cluster.kubeconfig.read_text())
        for user in config["users"]:
            user["user"] = {"token": token}
        path = tmp_path / "limited.kubeconfig"
        path.write_text(yaml.safe_dump(config))
        yield path
    finally:
        core.delete_namespace(NAMESPACE)


def test_a_run_whose_credentials_are_refused_says_what_and_to_whom(cluster: EmbeddedCluster, tmp_path: Path,
                                                                   limited_kubeconfig: Path) -> None:
    done = subprocess.run(
        [*WINSUITE, "run", "--kubeconfig", str(limited_kubeconfig), "--node-os", "linux", "--focus",
         r"Pods should get a host IP", "--results-root", str(tmp_path / "results")],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == ExitCode.USAGE_ERROR, output
    assert "internal error" not in output and "Traceback" not in output, output
    said = [line for line in output.splitlines() if line.startswith("winsuite: error:")]
    assert said and said[0].startswith(
        "winsuite: error: the API server refused a request made with these credentials: 403 Forbidden: "), output
    assert f'User "system:serviceaccount:{NAMESPACE}:{ACCOUNT}" cannot' in said[0], said[0]
    finished = only_build(tmp_path / "results").finished
    assert finished["result"] == "FAILURE" and finished["passed"] is False
    assert finished["metadata"]["error"] == said[0].removeprefix("winsuite: error: ")
