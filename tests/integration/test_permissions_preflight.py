"""A run asks the API server what it may do before it makes anything: with credentials that may discover the cluster
but not create a namespace (a service account bound to `view`, plus reading nodes), `winsuite run` stops before its
first test with one line naming the verb, the resource and the user, creates nothing, and nothing it writes holds a
traceback or the HTTP headers of an API answer; on the embedded cluster and on a user's (kwokctl's, reached only
through its kubeconfig). Through winsuite's API client, a refused request raises an error whose text holds no headers
either."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tests.integration.runner_support import CLUSTERS
from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import ReachedCluster
from tests.integration.runner_support import asked_cluster
from tests.integration.runner_support import only_build
from tests.integration.runner_support import service_account_kubeconfig
from tests.integration.runner_support import target_os
from winsuite.cluster.kubeconfig import api_client
from winsuite.errors import ExitCode
from winsuite.k8s import run_leases
from winsuite.k8s.namespaces import RUN_ID_LABEL

pytestmark = pytest.mark.cluster

NAMESPACE = "winsuite-viewer"
ACCOUNT = "viewer"
NODE_READER = "winsuite-test-node-reader"
FOCUS = r"Pods should get a host IP|ConfigMap should be consumable from pods in volume \[NodeConformance\]"
LEAKS = ("Traceback", "HTTPHeaderDict", "Audit-Id")


@pytest.fixture(scope="module", params=CLUSTERS)
def any_cluster(request: pytest.FixtureRequest) -> ReachedCluster:
    return asked_cluster(request)


@pytest.fixture(scope="module")
def viewer_kubeconfig(any_cluster: ReachedCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One service account per cluster for the module's tests (a namespace deleted takes a while to go)."""
    rbac = client.RbacAuthorizationV1Api(any_cluster.api)
    rbac.create_cluster_role(client.V1ClusterRole(
        metadata=client.V1ObjectMeta(name=NODE_READER),
        rules=[client.V1PolicyRule(api_groups=[""], resources=["nodes"], verbs=["get", "list", "watch"])]))
    try:
        with service_account_kubeconfig(any_cluster, tmp_path_factory.mktemp("viewer"), NAMESPACE, ACCOUNT,
                                        ("view", NODE_READER)) as path:
            yield path
    finally:
        rbac.delete_cluster_role(NODE_READER)


def test_a_run_the_cluster_would_refuse_stops_before_making_anything(any_cluster: ReachedCluster, tmp_path: Path,
                                                                      viewer_kubeconfig: Path) -> None:
    root = tmp_path / "results"
    done = subprocess.run(
        [*WINSUITE, "run", "--kubeconfig", str(viewer_kubeconfig), "--node-os", target_os(any_cluster), "--focus",
         FOCUS, "--results-root", str(root)],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == ExitCode.USAGE_ERROR, output
    said = [line for line in output.splitlines() if line.startswith("winsuite: error:")]
    assert len(said) == 1 and "internal error" not in output, output
    assert said[0].startswith(f"winsuite: error: the cluster refuses system:serviceaccount:{NAMESPACE}:{ACCOUNT} "
                              "to create namespaces (needed to run tests)"), said[0]
    assert said[0].endswith("; nothing was created"), said[0]
    build = only_build(root)
    log = (build.path / "build-log.txt").read_text()
    for text in (done.stdout, done.stderr, log):
        assert not [leak for leak in LEAKS if leak in text], text

    run_id = build.started["metadata"]["run-id"]
    selector = f"{RUN_ID_LABEL}={run_id}"
    assert client.CoreV1Api(any_cluster.api).list_namespace(label_selector=selector).items == []
    leases = client.CoordinationV1Api(any_cluster.api).list_namespaced_lease(run_leases.NAMESPACE,
                                                                             label_selector=selector)
    assert leases.items == []
    services = client.CoreV1Api(any_cluster.api).list_service_for_all_namespaces(label_selector=selector)
    assert services.items == []


def test_a_refusal_through_winsuites_client_holds_no_headers(viewer_kubeconfig: Path) -> None:
    api = api_client(viewer_kubeconfig)
    with pytest.raises(ApiException) as refused:
        client.CoreV1Api(api).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(
            name="winsuite-refused")))
    assert refused.value.status == 403
    text = str(refused.value)
    assert "cannot create resource" in text and not [leak for leak in LEAKS if leak in text], text
