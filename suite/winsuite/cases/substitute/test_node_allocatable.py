"""Node allocatable (KEP-116 substitute): allocatable = capacity - reservations - hard eviction thresholds,
and the scheduler, not the OS, keeps pods within it.

Windows has no cgroups to enforce reservations, but its kubelet computes allocatable as a Linux kubelet does
(GetNodeAllocatableReservation of pkg/kubelet/cm is the same on both), and overprovisioning is blocked only
through that number (seed 000, "Reservations are not enforced by the OS"). The reservations come from the
kubelet's /configz through the node proxy, as test/e2e/windows/memory_limits.go reads them; unlike that test
(ported as-is in suite/winsuite/cases/windows/test_memory_limits.py) this one checks every resource the kubelet
reserves for (cpu, memory, ephemeral-storage, pods), honours percentage thresholds as the kubelet does
(GetThresholdQuantity), and subtracts only the hard eviction thresholds, which is all the kubelet
subtracts: memory_limits.go also subtracts evictionSoft, which agrees with the kubelet only while no soft
threshold is set.
"""

from __future__ import annotations

import math
import struct
from decimal import Decimal
from typing import Any

import pytest
from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import ClusterSession
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import no_pods
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import events
from winsuite.k8s import kubelet
from winsuite.k8s import manifests
from winsuite.k8s import netexec
from winsuite.k8s import pods
from winsuite.k8s import retry

allocatable = Describe(Area("sig-node"), Area("sig-windows"), "Node Allocatable")

CHECKED = ("cpu", "memory", "ephemeral-storage", "pods")
# Eviction signals that reserve a resource (hardEvictionReservation); the others do not shrink allocatable.
RESERVING_SIGNALS = {"memory.available": "memory", "nodefs.available": "ephemeral-storage"}
MEBIBYTE = 1024 * 1024
SCHEDULE_TIMEOUT = 120.0


def float32(value: float) -> float:
    return float(struct.unpack("f", struct.pack("f", value))[0])


def threshold(value: str, capacity: Decimal) -> Decimal:
    """evictionapi.GetThresholdQuantity: a quantity, or a percentage of the capacity as the kubelet computes
    it (ParsePercentage's float32 arithmetic, then int64(float64(capacity) * percentage))."""
    if not value.endswith("%"):
        return kubelet.to_decimal(value)
    percentage = float32(float32(float(value.removesuffix("%"))) / 100)
    return Decimal(int(float(math.ceil(capacity)) * percentage))


def expected_allocatable(capacity: dict[str, str], config: dict[str, Any]) -> dict[str, Decimal]:
    """Capacity minus systemReserved, kubeReserved and the hard eviction thresholds (and, for memory, the
    hugepages the node reserves), never below zero: the kubelet's MachineInfo setter."""
    quantities = {resource: kubelet.to_decimal(value) for resource, value in capacity.items()}
    reserved: dict[str, Decimal] = {}
    for source in ("systemReserved", "kubeReserved"):
        for resource, value in (config.get(source) or {}).items():
            reserved[resource] = reserved.get(resource, Decimal(0)) + kubelet.to_decimal(value)
    for signal, value in (config.get("evictionHard") or {}).items():
        resource = RESERVING_SIGNALS.get(signal)
        if resource in quantities:
            reserved[resource] = reserved.get(resource, Decimal(0)) + threshold(value, quantities[resource])
    expected = {resource: max(Decimal(0), quantity - reserved.get(resource, Decimal(0)))
                for resource, quantity in quantities.items() if resource in CHECKED}
    hugepages = sum((q for r, q in quantities.items() if r.startswith("hugepages-")), Decimal(0))
    if "memory" in expected:
        expected["memory"] = max(Decimal(0), expected["memory"] - hugepages)
    return expected


def read_node(api: client.ApiClient, name: str) -> client.V1Node:
    node: client.V1Node = retry.call(client.CoreV1Api(api).read_node, name)
    return node


def status_of(node: client.V1Node) -> client.V1NodeStatus:
    return node.status or client.V1NodeStatus()


@no_pods("compares the nodes' allocatable resources with their kubelets' configuration")
@allocatable.it("should be the capacity minus the kube and system reservations and the hard eviction "
                "thresholds", category="Core.Scheduling", needs=[Capability.KUBELET_CONFIGZ])
def test_allocatable_is_capacity_minus_reservations(api: client.ApiClient, namespace: str, target: Target,
                                                    cluster: ClusterSession) -> None:
    names = netexec.eligible_nodes(cluster.facts, target.placement)
    assert names, f"no {target.os} node runs containers"
    mismatches = []
    for name in names:
        config, status = kubelet.configz(api, name), status_of(read_node(api, name))
        expected = expected_allocatable(dict(status.capacity or {}), config)
        stated = {r: kubelet.to_decimal(v) for r, v in (status.allocatable or {}).items() if r in expected}
        reservations = {k: config.get(k) for k in ("systemReserved", "kubeReserved", "evictionHard")}
        mismatches += [f"{name} {r}: allocatable {stated.get(r)}, calculated {q} from capacity "
                       f"{(status.capacity or {}).get(r)} and {reservations}"
                       for r, q in expected.items() if stated.get(r) != q]
    assert not mismatches, "calculated and stated allocatable differ: " + "; ".join(mismatches)


def over_allocatable_pod(target: Target, request: int) -> dict[str, Any]:
    pause = manifests.container("pause", target.image("pause"), resources={"requests": {"memory": str(request)}})
    return target.place(manifests.pod("over-allocatable", [pause]))


@windows_pods(lambda target: [over_allocatable_pod(target, 15 * 2**30)],
              upstream="test/e2e/windows/memory_limits.go:102-180 (overrideAllocatableMemoryTest)")
@allocatable.it("should keep a pod that fits a node's memory capacity but not its allocatable memory from "
                "being scheduled", category="Core.Scheduling", needs=[Capability.RUNS_CONTAINERS],
                images=["pause"])
def test_overprovisioning_is_blocked_by_allocatable(api: client.ApiClient, namespace: str, target: Target,
                                                    cluster: ClusterSession) -> None:
    nodes = [status_of(read_node(api, n)) for n in netexec.eligible_nodes(cluster.facts, target.placement)]
    assert nodes, f"no {target.os} node runs containers"
    largest = max(nodes, key=lambda s: kubelet.to_decimal((s.allocatable or {})["memory"]))
    capacity = kubelet.to_decimal((largest.capacity or {})["memory"])
    room = kubelet.to_decimal((largest.allocatable or {})["memory"])
    if capacity - room < 2 * MEBIBYTE:
        pytest.skip("requires a node whose allocatable memory is below its capacity, through reservations "
                    f"or a hard eviction threshold (found: capacity {capacity}, allocatable {room} bytes)")
    request = int(room + (capacity - room) // 2)  # above every node's allocatable, within this one's capacity
    pods.create(api, namespace, over_allocatable_pod(target, request))
    event = events.wait_for_event(api, namespace, involved="over-allocatable", reason="FailedScheduling",
                                  timeout=SCHEDULE_TIMEOUT)
    assert "Insufficient memory" in (event.message or ""), event.message
    spec = pods.get(api, namespace, "over-allocatable").spec or client.V1PodSpec(containers=[])
    assert spec.node_name is None, f"the pod was bound to {spec.node_name}"
