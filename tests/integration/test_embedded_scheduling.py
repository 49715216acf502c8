"""Real control-plane behaviour on the embedded cluster's simulated nodes: scheduling and admission only.

kwok reports pods on simulated nodes Running without running anything, so these tests assert where the
scheduler put a pod and what the API server accepted, never that a container ran.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.k8s import events
from winsuite.k8s import pods
from winsuite.k8s.waits import wait_for_set

pytestmark = pytest.mark.cluster

WINDOWS = {"kubernetes.io/os": "windows"}
TOLERATE_WINDOWS = {"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}
# Only tests about scheduling and admission may tolerate the simulated-node taint.
TOLERATE_SIMULATED = {"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}
ON_SIMULATED_WINDOWS: dict[str, Any] = {"nodeSelector": WINDOWS, "tolerations": [TOLERATE_WINDOWS, TOLERATE_SIMULATED]}


def pod(cluster: EmbeddedCluster, name: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "main", "image": cluster.image("agnhost"), "args": ["pause"]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [container], **spec},
    }


def test_windows_pod_without_toleration_stays_pending(cluster: EmbeddedCluster, namespace: str) -> None:
    pods.create(cluster.api, namespace, pod(cluster, "no-toleration", nodeSelector=WINDOWS))

    event = events.wait_for_event(
        cluster.api, namespace, involved="no-toleration", reason="FailedScheduling", timeout=60
    )

    assert "untolerated taint" in (event.message or "")
    pending = pods.get(cluster.api, namespace, "no-toleration")
    assert pending.status.phase == "Pending"
    assert pending.spec.node_name is None


def test_tolerating_pod_binds_to_the_requested_build(cluster: EmbeddedCluster, namespace: str) -> None:
    placement = {
        **ON_SIMULATED_WINDOWS,
        "nodeSelector": {**WINDOWS, "node.kubernetes.io/windows-build": "10.0.20348"},
    }
    pods.create(cluster.api, namespace, pod(cluster, "ltsc2022", **placement))

    bound = pods.wait_for_pod(cluster.api, namespace, "ltsc2022", state="Scheduled", timeout=60)

    expected = cluster.core.list_node(label_selector="node.kubernetes.io/windows-build=10.0.20348").items
    assert [node.metadata.name for node in expected] == [bound.spec.node_name]


def test_deployment_replicaset_creates_its_pods(cluster: EmbeddedCluster, namespace: str) -> None:
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": pod(cluster, "unused", **ON_SIMULATED_WINDOWS)["spec"],
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": template},
    }
    apps = client.AppsV1Api(cluster.api)
    apps.create_namespaced_deployment(namespace, deployment)

    created = wait_for_set(
        cluster.core.list_namespaced_pod,
        namespace=namespace,
        label_selector="app=web",
        what="the Deployment's 2 pods",
        condition=lambda items: len(items) == 2,
        timeout=60,
    )

    replica_sets = apps.list_namespaced_replica_set(namespace).items
    assert [rs.metadata.owner_references[0].name for rs in replica_sets] == ["web"]
    assert {p.metadata.owner_references[0].name for p in created} == {replica_sets[0].metadata.name}


def test_windows_pod_with_run_as_user_is_rejected(cluster: EmbeddedCluster, namespace: str) -> None:
    manifest = pod(cluster, "windows-uid", os={"name": "windows"}, securityContext={"runAsUser": 1000})

    with pytest.raises(client.ApiException) as rejected:
        pods.create(cluster.api, namespace, manifest)

    assert rejected.value.status == 422
    expected = "spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod"
    assert expected in str(rejected.value.body)
