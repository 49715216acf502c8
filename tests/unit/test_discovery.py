"""Discovery facts -> capabilities, skip reasons, warnings and metadata (pure logic, no cluster)."""

from __future__ import annotations

import dataclasses

import pytest

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.facts import NodeFacts
from winsuite.cluster.discovery import _warnings
from winsuite.cluster.load_balancer import NOT_PROBED
from winsuite.inputs.images import load_image_catalog
from winsuite.policy.exclusions import ScopeFacts


def node(name: str, os_name: str, *, simulated: bool, build: str | None = None, kubelet: str = "v1.36.3",
         runtime: str = "containerd://1.7.20", ready: bool = True, **extra: object) -> NodeFacts:
    fields: dict[str, object] = dict(
        name=name, os=os_name, windows_build=build, kubelet_version=kubelet, container_runtime=runtime,
        os_image="", kernel_version="", simulated=simulated, ready=ready, unschedulable=False, taints=[],
        labels={}, allocatable={}, capacity={}, internal_ip="10.0.0.1", provider_id=None,
    )
    fields.update(extra)
    return NodeFacts(**fields)  # type: ignore[arg-type]  # test data: types match the dataclass


def facts(*nodes: NodeFacts, dns: bool = True) -> ClusterFacts:
    return ClusterFacts(server="https://127.0.0.1:6443", server_version="v1.36.3", nodes=list(nodes),
                        cluster_dns=dns, metrics_api=False, runtime_classes=[], egress_allowed=False, warnings=[])


EMBEDDED = facts(
    node("win2019-0", "windows", simulated=True, build="10.0.17763"),
    node("win2022-0", "windows", simulated=True, build="10.0.20348"),
    node("linux-sim-0", "linux", simulated=True),
    node("real", "linux", simulated=False),
)


def test_simulated_windows_nodes_do_not_run_windows_containers() -> None:
    reason = EMBEDDED.skip_reason((Capability.RUNS_CONTAINERS,), "windows")
    assert reason == "requires a node that runs Windows containers (found: 2 simulated Windows nodes)"


def test_the_real_linux_node_runs_linux_containers() -> None:
    assert EMBEDDED.skip_reason((Capability.RUNS_CONTAINERS, Capability.EXEC, Capability.STATS_SUMMARY),
                                "linux") is None


def test_simulated_nodes_count_for_scheduling() -> None:
    assert EMBEDDED.missing(Capability.WINDOWS_NODES, "linux") is None
    assert EMBEDDED.missing(Capability.MIXED_WINDOWS_BUILDS, "windows") is None
    assert EMBEDDED.missing(Capability.WINDOWS_KERNEL, "linux") == "2 simulated Windows nodes"


@pytest.mark.parametrize(("capability", "found"), [
    (Capability.CLUSTER_DNS, "no kube-system/kube-dns Service with ready endpoints"),
    (Capability.EXTERNAL_NETWORK, "a cluster whose pods may not reach the Internet"),
])
def test_missing_cluster_features_say_what_was_found(capability: Capability, found: str) -> None:
    assert facts(node("real", "linux", simulated=False), dns=False).missing(capability, "linux") == found


def test_load_balancer_support_is_what_was_observed_never_a_provider_id() -> None:
    cloud_node = node("aks-0", "windows", simulated=False, provider_id="azure:///subscriptions/x/vm-0")
    unobserved = dataclasses.replace(facts(cloud_node), no_load_balancer=NOT_PROBED)
    observed = dataclasses.replace(facts(node("real", "linux", simulated=False)),
                                   load_balancer="a probe LoadBalancer Service got ingress 10.244.0.240")

    assert unobserved.missing(Capability.LOAD_BALANCER, "windows") == NOT_PROBED
    assert observed.missing(Capability.LOAD_BALANCER, "linux") is None
    assert ClusterFacts.from_json(observed.to_json()) == observed


def test_hostprocess_needs_containerd_1_7_on_a_real_windows_node() -> None:
    old = facts(node("w", "windows", simulated=False, build="10.0.20348", runtime="containerd://1.6.28"))
    new = facts(node("w", "windows", simulated=False, build="10.0.20348", runtime="containerd://1.7.22"))
    assert old.missing(Capability.HOSTPROCESS, "windows") is not None
    assert new.missing(Capability.HOSTPROCESS, "windows") is None


def test_not_ready_real_nodes_are_reported_as_such() -> None:
    cluster = facts(node("w", "windows", simulated=False, build="10.0.20348", ready=False))
    assert cluster.missing(Capability.RUNS_CONTAINERS, "windows") == "1 real Windows node, 1 not Ready or cordoned"


def test_warnings_for_version_skew_and_unknown_windows_builds() -> None:
    nodes = [node("new", "linux", simulated=False, kubelet="v1.37.0"),
             node("old", "linux", simulated=False, kubelet="v1.32.1"),
             node("ok", "linux", simulated=False, kubelet="v1.33.0"),
             node("w", "windows", simulated=False, build="10.0.17134")]
    warnings = _warnings("v1.36.3", nodes, load_image_catalog().windows_builds())
    assert len(warnings) == 3
    assert "new" in warnings[0] and "must not be newer" in warnings[0]
    assert "old" in warnings[1] and "at most 3 minor versions older" in warnings[1]
    assert "10.0.17134" in warnings[2]


def test_metadata_and_round_trip() -> None:
    metadata = EMBEDDED.metadata("windows")
    assert metadata["kubernetes-version"] == "v1.36.3"
    # The embedded cluster's Windows nodes are all simulated: their builds are published as simulated ones.
    assert "windows-builds" not in metadata
    assert metadata["simulated-windows-builds"] == "10.0.17763,10.0.20348"
    assert metadata["node-os"] == "windows"
    assert ClusterFacts.from_json(EMBEDDED.to_json()) == EMBEDDED
    scope = ScopeFacts.of_cluster(EMBEDDED)
    assert scope.windows_builds == frozenset({"10.0.17763", "10.0.20348"})
    assert dataclasses.replace(scope, cni=None).kubernetes_version == "v1.36.3"
