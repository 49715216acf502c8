"""The nodes and cluster DNS as discovery sees them: what is simulated, what really runs containers."""

from __future__ import annotations

import pytest
from kubernetes import client

from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.cluster.embedded.config import BRIDGE_IP
from winsuite.cluster.embedded.config import CLUSTER_DNS_IP
from winsuite.components.simnodes import FAKE_ANNOTATION
from winsuite.inputs.pins import load_pins

pytestmark = pytest.mark.cluster


def taints(node: client.V1Node) -> set[str]:
    return {f"{t.key}={t.value}:{t.effect}" for t in node.spec.taints or []}


def test_simulated_nodes_are_annotated_tainted_and_ready(cluster: EmbeddedCluster) -> None:
    simulated = [
        n for n in cluster.core.list_node().items if FAKE_ANNOTATION in (n.metadata.annotations or {})
    ]

    builds = sorted(n.metadata.labels.get("node.kubernetes.io/windows-build", "linux") for n in simulated)
    assert builds == ["10.0.17763", "10.0.20348", "linux"]
    for node in simulated:
        assert "kwok.x-k8s.io/node=fake:NoSchedule" in taints(node)
        assert any(c.type == "Ready" and c.status == "True" for c in node.status.conditions)
        if node.metadata.labels["kubernetes.io/os"] == "windows":
            assert "os=windows:NoSchedule" in taints(node)
            assert node.status.node_info.os_image.startswith("Windows Server")


def test_the_real_node_is_an_untainted_linux_node_without_the_kwok_annotation(
    real_node: EmbeddedCluster,
) -> None:
    node = real_node.core.read_node(real_node.real_node_name)

    assert FAKE_ANNOTATION not in (node.metadata.annotations or {})
    assert node.metadata.labels["kubernetes.io/os"] == "linux"
    assert not node.spec.taints
    assert node.status.node_info.kubelet_version == load_pins().kubernetes
    assert [a.address for a in node.status.addresses if a.type == "InternalIP"] == [BRIDGE_IP]


def test_cluster_dns_is_the_kube_dns_service_with_a_ready_endpoint(real_node: EmbeddedCluster) -> None:
    service = real_node.core.read_namespaced_service("kube-dns", "kube-system")
    slices = client.DiscoveryV1Api(real_node.api).list_namespaced_endpoint_slice(
        "kube-system", label_selector="kubernetes.io/service-name=kube-dns"
    )

    assert service.spec.cluster_ip == CLUSTER_DNS_IP
    ready = [a for s in slices.items for ep in s.endpoints or [] if ep.conditions.ready for a in ep.addresses]
    assert ready == [BRIDGE_IP]
