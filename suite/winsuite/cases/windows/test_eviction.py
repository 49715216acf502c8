"""Eviction on Windows nodes (eviction.go): a pod using up the node's memory is evicted under memory pressure."""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any

import pytest
from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Disruptive
from winsuite.authoring.naming import Feature
from winsuite.authoring.naming import Serial
from winsuite.authoring.naming import Slow
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import events
from winsuite.k8s import kubelet
from winsuite.k8s import manifests
from winsuite.k8s import nodes
from winsuite.k8s import objects
from winsuite.k8s import pods
from winsuite.k8s.waits import WaitTimeout
from winsuite.k8s.waits import wait_for

eviction = Describe(Area("sig-windows"), Feature("Windows"), "Eviction", Serial, Slow, Disruptive)

log = logging.getLogger("winsuite.cases")
MEMORY_PRESSURE_TAINT = "node.kubernetes.io/memory-pressure"
# The memory-pressure taint takes 10-15 s to show; give it 45 s, so that the test waits for its removal.
TAINT_APPEARS_TIMEOUT = 45.0
NODE_TIMEOUT = 600.0
MEBIBYTE = 1024 * 1024
CHUNK = 300 * MEBIBYTE


def hard_eviction_threshold(api: client.ApiClient, node: client.V1Node) -> Decimal:
    config = kubelet.configz(api, objects.name_of(node))
    return kubelet.memory_setting(config.get("evictionHard"), "memory.available")


def capacity_of(node: client.V1Node) -> Decimal:
    return kubelet.memory_setting((node.status.capacity if node.status else None) or {}, "memory")


def has_memory_pressure_taint(node: client.V1Node) -> bool:
    taints = (node.spec.taints if node.spec else None) or []
    return any(t.key == MEMORY_PRESSURE_TAINT and t.effect == "NoSchedule" for t in taints)


def describe_node(node: client.V1Node) -> str:
    conditions = (node.status.conditions if node.status else None) or []
    pressure = next((f"{c.status} ({c.reason}: {c.message})" for c in conditions if c.type == "MemoryPressure"), "?")
    taints = [f"{t.key}:{t.effect}" for t in (node.spec.taints if node.spec else None) or []]
    return f"node {objects.name_of(node)}: MemoryPressure={pressure}, taints={taints}"


def wait_for_node(api: client.ApiClient, name: str, what: str, condition: Any, timeout: float) -> client.V1Node:
    found: client.V1Node = wait_for(client.CoreV1Api(api).list_node, name=name, namespace=None, what=f"{name} {what}",
                                    condition=condition, timeout=timeout, describe=describe_node)
    return found


def memory_hog(target: Target, name: str, node: str, testlimit_args: list[str], **resources: Any) -> dict[str, Any]:
    """A resource-consumer pod running Sysinternals' testlimit to allocate and touch memory."""
    hog = manifests.container(name, target.image("resource-consumer"), resources=resources,
                              command=["/bin/testlimit.exe", "-accepteula", *testlimit_args])
    return manifests.pin_to_node(target.place(manifests.pod(name, [hog])), node)


def eviction_pods(target: Target, node: str, chunks: int) -> list[dict[str, Any]]:
    """pod1: 5 x 100Mb within its 500Mi request; pod2: `chunks` x 300Mb, more than the node has."""
    return [memory_hog(target, "pod1", node, ["-d", "100Mb", "-e", "5", "20000s", "-c", "5"],
                       requests={"memory": str(500 * MEBIBYTE)}),
            memory_hog(target, "pod2", node, ["-d", "300Mb", "-e", "1", "20000s", "-c", str(chunks)])]


@windows_pods(lambda target: eviction_pods(target, "win-0", 50), upstream="test/e2e/windows/eviction.go:65-237")
@eviction.it("should evict a pod when a node experiences memory pressure",
             twin="[sig-windows] [Feature:Windows] Eviction [Serial] [Slow] [Disruptive] should evict a pod when a "
                  "node experiences memory pressure",
             category="Extend.Worker", needs=[Capability.WINDOWS_KERNEL, Capability.KUBELET_CONFIGZ],
             images=["resource-consumer"])
def test_eviction_under_memory_pressure(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    # A node used by the reboot test may keep pods it cannot delete (projectcalico/calico#6974): the eviction
    # manager would pick them and fail to remove them.
    candidates = [n for n in nodes.windows_nodes(api) if objects.labels_of(n).get("test/reboot-used") != "true"]
    found = next(((n, t) for n in candidates if (t := hard_eviction_threshold(api, n)) != 0), None)
    if found is None:
        pytest.skip("requires a Windows node with a hard memory-pressure eviction threshold (found: none)")
    node, threshold = found
    name = objects.name_of(node)
    wait_for_node(api, name, "to lose its memory-pressure taint", lambda n: not has_memory_pressure_taint(n),
                  NODE_TIMEOUT)

    # 5 x 100Mb, within its 500Mi request; then 300Mb chunks adding up to more than the node has.
    first, second = eviction_pods(target, name, int((capacity_of(node) - threshold) / CHUNK) + 3)
    pods.create(api, namespace, first)
    pods.wait_for_pod(api, namespace, "pod1", state="Running", timeout=pods.POD_START_TIMEOUT)
    pods.create(api, namespace, second)
    pods.wait_for_pod(api, namespace, "pod2", state="Running", timeout=pods.POD_START_TIMEOUT)

    events.wait_for_event(api, namespace, involved="pod2", reason="Evicted", timeout=NODE_TIMEOUT)

    # Upstream sleeps 45 s so that the memory-pressure taint shows before it waits for the node to be
    # schedulable again; this waits for the taint at most as long. Not seeing it is no failure upstream either.
    try:
        wait_for_node(api, name, "to get the memory-pressure taint", has_memory_pressure_taint, TAINT_APPEARS_TIMEOUT)
    except WaitTimeout:
        log.info("node %s showed no memory-pressure taint within %.0fs", name, TAINT_APPEARS_TIMEOUT)
    wait_for_node(api, name, "to be schedulable without the memory-pressure taint",
                  lambda n: nodes.is_schedulable(n) and not has_memory_pressure_taint(n), NODE_TIMEOUT)
