"""Windows memory limits (memory_limits.go): reservations shrink allocatable, and the scheduler blocks
overprovisioning (the OS itself does not enforce reservations)."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Feature
from winsuite.authoring.naming import Serial
from winsuite.authoring.naming import Slow
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import no_pods
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import events
from winsuite.k8s import kubelet
from winsuite.k8s import manifests
from winsuite.k8s import nodes
from winsuite.k8s import objects
from winsuite.k8s import pods
from winsuite.k8s import retry

memory_limits = Describe(Area("sig-windows"), Feature("Windows"), "Memory Limits", Serial, Slow)
TWIN = "[sig-windows] [Feature:Windows] Memory Limits [Serial] [Slow] "

MEBIBYTE = 1024 * 1024
HEADROOM = 100 * MEBIBYTE  # what upstream leaves free on each node
FAILURE_POD_MEMORY = "1Gi"
FAILURE_POD = "mem-failure-pod"
SCHEDULE_TIMEOUT = 180.0


def memory_of(values: dict[str, str] | None) -> Decimal:
    return kubelet.memory_setting(values, "memory")


def requested_memory(pod: client.V1Pod) -> Decimal:
    """What the scheduler counts for a pod: max(sum of its containers, largest init container) + overhead."""
    spec = pod.spec or client.V1PodSpec(containers=[])

    def request(container: client.V1Container) -> Decimal:
        return memory_of((container.resources.requests if container.resources else None) or {})

    init = max((request(c) for c in spec.init_containers or []), default=Decimal(0))
    return max(sum((request(c) for c in spec.containers), Decimal(0)), init) + memory_of(spec.overhead)


def free_memory(api: client.ApiClient, node: client.V1Node) -> Decimal:
    """Allocatable memory not yet requested by the pods bound to the node."""
    bound = retry.call(client.CoreV1Api(api).list_pod_for_all_namespaces,
                       field_selector=f"spec.nodeName={objects.name_of(node)},status.phase!=Succeeded,"
                                      f"status.phase!=Failed").items
    allocatable = memory_of((node.status.allocatable if node.status else None) or {})
    return allocatable - sum((requested_memory(p) for p in bound), Decimal(0))


def tolerates(tolerations: list[dict[str, str]], node: client.V1Node) -> bool:
    """Whether pods with these tolerations may be scheduled to the node despite its taints."""

    def tolerated(taint: client.V1Taint) -> bool:
        return any(t.get("key") in (None, taint.key) and t.get("effect") in (None, taint.effect)
                   and (t.get("operator") == "Exists" or t.get("value") == (taint.value or ""))
                   for t in tolerations)

    taints = (node.spec.taints if node.spec else None) or []
    return all(tolerated(t) for t in taints if t.effect in ("NoSchedule", "NoExecute"))


def pause_pod(target: Target, name: str, memory: str) -> dict[str, Any]:
    pause = manifests.container(name, target.image("pause"), resources={"limits": {"memory": memory}})
    return target.place(manifests.pod(name, [pause]))


@no_pods("compares a Windows node's allocatable memory with its kubelet's configuration")
@memory_limits.it("Allocatable node memory", "should be equal to a calculated allocatable memory value",
                  twin=TWIN + "Allocatable node memory should be equal to a calculated allocatable memory "
                              "value",
                  category="Core.Scheduling", needs=[Capability.WINDOWS_KERNEL, Capability.KUBELET_CONFIGZ])
def test_allocatable_is_capacity_minus_reservations(api: client.ApiClient, namespace: str,
                                                    target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    node = nodes.find_windows_node(api)
    config = kubelet.configz(api, objects.name_of(node))
    status = node.status or client.V1NodeStatus()
    capacity, allocatable = memory_of(status.capacity), memory_of(status.allocatable)
    reserved = {
        "systemReserved": memory_of(config.get("systemReserved")),
        "kubeReserved": memory_of(config.get("kubeReserved")),
        "evictionSoft": kubelet.memory_setting(config.get("evictionSoft"), "memory.available"),
        "evictionHard": kubelet.memory_setting(config.get("evictionHard"), "memory.available"),
    }
    calculated = capacity - sum(reserved.values(), Decimal(0))
    assert calculated == allocatable, (
        f"node {objects.name_of(node)}: capacity {capacity} - {reserved} = {calculated}, "
        f"but the node states allocatable memory {allocatable}")


def overprovisioning_pods(target: Target, free: dict[str, int]) -> list[dict[str, Any]]:
    """A pause pod per node, sized to what the node's pods leave free (less 100Mi), and the one that no
    longer fits."""
    fill = [manifests.pin_to_node(pause_pod(target, f"mem-test-{uuid.uuid4()}", str(limit)), node)
            for node, limit in free.items()]
    return [*fill, pause_pod(target, FAILURE_POD, FAILURE_POD_MEMORY)]


@windows_pods(lambda target: overprovisioning_pods(target.scheduling_only(), {"win-0": 8 * 2**30}),
              upstream="test/e2e/windows/memory_limits.go:61-63,102-180")
@memory_limits.it("attempt to deploy past allocatable memory limits",
                  "should fail deployments of pods once there isn't enough memory",
                  twin=TWIN + "attempt to deploy past allocatable memory limits should fail deployments of "
                              "pods once there isn't enough memory",
                  category="Core.Scheduling", needs=[Capability.WINDOWS_NODES], images=["pause"])
def test_overprovisioning_is_blocked(api: client.ApiClient, namespace: str, target: Target) -> None:
    """A scheduling test: on simulated Windows nodes it shows the scheduler's part, which is all of it.

    Upstream binds a pod of (allocatable - 100Mi) to every Windows node with spec.nodeName; winsuite lets
    the scheduler bind one to each node the run may use, sized to what the node's pods leave free, and waits
    until each is bound, so the node is really full when the last pod comes."""
    nodes.skip_unless_target_os_is_windows(target.os)
    target = target.scheduling_only()
    tolerations = target.placement.tolerations()
    usable = [n for n in nodes.windows_nodes(api, simulated=True) if tolerates(tolerations, n)]
    assert usable, "no Ready, schedulable Windows node the run's pods may use"
    free = {}
    for node in usable:
        limit = free_memory(api, node) - HEADROOM
        assert limit > 0, f"node {objects.name_of(node)} has less than 100Mi of allocatable memory left"
        free[objects.name_of(node)] = int(limit)
    *fill, overflow = overprovisioning_pods(target, free)
    for manifest in fill:
        pods.create(api, namespace, manifest)
        pods.wait_for_pod(api, namespace, manifest["metadata"]["name"], state="Scheduled", timeout=SCHEDULE_TIMEOUT)

    failure = FAILURE_POD
    pods.create(api, namespace, overflow)
    event = events.wait_for_event(api, namespace, involved=failure, reason="FailedScheduling",
                                  timeout=SCHEDULE_TIMEOUT)
    assert event.type == "Warning", events.describe(event)
    assert "Insufficient memory" in (event.message or ""), f"not refused for memory: {events.describe(event)}"
