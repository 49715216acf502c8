"""SchedulerPreemption (test/e2e/scheduling/preemption.go): lower-priority pods give way to higher ones.

Upstream fills each node with a fake extended resource it advertises in the node's status (not with CPU), so
the tests need no spare cores: they run on every node of the target OS that runs containers. The
PriorityClasses are cluster-scoped and the extended resources change the nodes: both are undone afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Serial
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import manifests
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import workloads
from winsuite.k8s.not_found import ignore_not_found
from winsuite.k8s.workloads import STRATEGIC_MERGE_PATCH
from winsuite.k8s.workloads import EventStream

preemption = Describe(Area("sig-scheduling"), "SchedulerPreemption", Serial)

EXTENDED_RESOURCE = "scheduling.k8s.io/foo"  # testExtendedResource
FAKE_CPU = "example.com/fakecpu"
LOW, MEDIUM, HIGH = "sched-preemption-low-priority", "sched-preemption-medium-priority", \
    "sched-preemption-high-priority"
PRIORITIES = {LOW: 1, MEDIUM: 100, HIGH: 1000}
FINALIZER = "example.com/test-finalizer"
POD_START_TIMEOUT = 120.0  # f.Timeouts.PodStartShort
SCHEDULING = client.SchedulingV1Api


@contextmanager
def priority_classes(api: client.ApiClient, values: dict[str, int],
                     labels: dict[str, str] | None = None) -> Iterator[dict[str, Any]]:
    """Create cluster-scoped PriorityClasses (an existing one is reused) and delete them afterwards."""
    scheduling, created = SCHEDULING(api), {}
    try:
        for name, value in values.items():
            body = {"metadata": {"name": name, "labels": labels or {}}, "value": value}
            try:
                created[name] = scheduling.create_priority_class(body)
            except client.exceptions.ApiException as err:
                if err.status != 409:
                    raise
                created[name] = scheduling.read_priority_class(name)
        yield created
    finally:
        for name in values:
            with ignore_not_found():
                scheduling.delete_priority_class(name, grace_period_seconds=0)


@contextmanager
def extended_resource(api: client.ApiClient, node_names: list[str], resource: str, amount: str) -> Iterator[None]:
    """e2enode.AddExtendedResource on each node; RemoveExtendedResource afterwards."""
    core = pods.core(api)
    patch = {"status": {"capacity": {resource: amount}, "allocatable": {resource: amount}}}
    try:
        for name in node_names:
            core.patch_node_status(name, patch, _content_type=STRATEGIC_MERGE_PATCH)
        yield
    finally:
        for name in node_names:
            remove_extended_resource(core, name, resource)


def remove_extended_resource(core: client.CoreV1Api, node_name: str, resource: str) -> None:
    def remove(node: Any) -> None:
        (node.status.capacity or {}).pop(resource, None)
        (node.status.allocatable or {}).pop(resource, None)

    workloads.update_with_retries(lambda: core.read_node(node_name),
                                  lambda node: core.replace_node_status(node_name, node), remove)


def execution_path_replica_sets(target: Target, hostname: str) -> list[dict[str, Any]]:
    """ReplicaSets rs-pod1..3 of one pause pod each, on the node, using 200, 300 and 450 of its fake CPU."""
    made = []
    for i, amount in ((1, "200"), (2, "300"), (3, "450")):
        manifest = pause_pod(target, f"pod{i}", f"p{i}", {FAKE_CPU: amount})
        manifest["spec"]["nodeSelector"]["kubernetes.io/hostname"] = hostname
        labels = {"name": f"pod{i}"}
        made.append({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": f"rs-pod{i}"},
                     "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                              "template": {"metadata": {"labels": labels}, "spec": manifest["spec"]}}})
    return made


def execution_path_preemptor(target: Target, hostname: str) -> dict[str, Any]:
    preemptor = pause_pod(target, "pod4", "p4", {FAKE_CPU: "500"})
    preemptor["spec"]["nodeSelector"]["kubernetes.io/hostname"] = hostname
    return preemptor


UPSTREAM = "test/e2e/scheduling/preemption.go:"


def worker_nodes(target: Target) -> list[str]:
    """GetReadySchedulableNodes, for the target OS: the nodes its pods land on and containers run on."""
    names = [n.name for n in target.facts.nodes if n.os == target.os and n.runs_containers]
    assert names, "no ready node of the target OS runs containers"
    return names


def pause_pod(target: Target, name: str, priority: str, resources: dict[str, str], *,
              node: str | None = None, **extra: Any) -> dict[str, Any]:
    """initPausePod: a restricted pause pod with a priority class, requesting `resources` (as limits too)."""
    pause = manifests.container(name, target.image("pause"),
                                resources={"requests": dict(resources), "limits": dict(resources)})
    manifest = manifests.pod(name, [pause], priorityClassName=priority, terminationGracePeriodSeconds=1)
    manifest["metadata"].update(extra)
    if node is not None:
        manifest = manifests.node_affinity(manifest, node)
    return target.place(manifests.restricted(manifest, target.os))


def filling_pods(target: Target, node_names: list[str]) -> list[dict[str, Any]]:
    """Two pods per node using 2 of its 5 extended resources each; the very first has low priority."""
    made: list[dict[str, Any]] = []
    for i, node in enumerate(node_names):
        for j in range(2):
            priority = LOW if not made else MEDIUM
            made.append(pause_pod(target, f"pod{i}-{j}-{priority}", priority, {EXTENDED_RESOURCE: "2"}, node=node))
    return made


def fill_nodes(api: client.ApiClient, namespace: str, target: Target, node_names: list[str]) -> list[Any]:
    created = [pods.create(api, namespace, manifest) for manifest in filling_pods(target, node_names)]
    for pod in created:
        pods.wait_for_pod(api, namespace, pod.metadata.name, state="Running", timeout=POD_START_TIMEOUT)
    return created


def assert_only_first_preempted(api: client.ApiClient, namespace: str, victims: list[Any]) -> None:
    core = pods.core(api)
    try:
        first = core.read_namespaced_pod(victims[0].metadata.name, namespace)
        assert first.metadata.deletion_timestamp is not None, f"expected pod to be preempted: {pods.describe(first)}"
    except client.exceptions.ApiException as err:
        assert err.status == 404, f"reading the preempted pod failed otherwise: {err}"
    for pod in victims[1:]:
        live = core.read_namespaced_pod(pod.metadata.name, namespace)
        assert live.metadata.deletion_timestamp is None, f"pod {pod.metadata.name} was preempted too"


@windows_pods(lambda target: [*filling_pods(target, ["win-0"]),
                             pause_pod(target, "preemptor-pod", HIGH, {EXTENDED_RESOURCE: "2"})],
              upstream=UPSTREAM + "128-216")
@preemption.it("validates basic preemption works", Conformance,
               twin="[sig-scheduling] SchedulerPreemption [Serial] validates basic preemption works [Conformance]",
               needs=[Capability.RUNS_CONTAINERS], images=["pause"], category="Core.Scheduling")
def test_basic_preemption(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes = worker_nodes(target)
    with priority_classes(api, PRIORITIES), extended_resource(api, nodes, EXTENDED_RESOURCE, "5"):
        victims = fill_nodes(api, namespace, target, nodes)
        preemptor = pause_pod(target, "preemptor-pod", HIGH, {EXTENDED_RESOURCE: "2"})
        pods.create(api, namespace, preemptor)
        pods.wait_for_pod(api, namespace, "preemptor-pod", state="Running", timeout=POD_START_TIMEOUT)
        assert_only_first_preempted(api, namespace, victims)


@windows_pods(lambda target: [*filling_pods(target, ["win-0"]),
                             pause_pod(target, "critical-pod", "system-cluster-critical", {EXTENDED_RESOURCE: "2"})],
              upstream=UPSTREAM + "218-317")
@preemption.it("validates lower priority pod preemption by critical pod", Conformance,
               twin="[sig-scheduling] SchedulerPreemption [Serial] validates lower priority pod preemption by "
                    "critical pod [Conformance]",
               needs=[Capability.RUNS_CONTAINERS], images=["pause"], category="Core.Scheduling")
def test_preemption_by_critical_pod(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes = worker_nodes(target)
    with priority_classes(api, PRIORITIES), extended_resource(api, nodes, EXTENDED_RESOURCE, "5"):
        victims = fill_nodes(api, namespace, target, nodes)
        critical = pause_pod(target, "critical-pod", "system-cluster-critical", {EXTENDED_RESOURCE: "2"})
        try:
            pods.create(api, "kube-system", critical)
            pods.wait_for_pod(api, "kube-system", "critical-pod", state="Running", timeout=POD_START_TIMEOUT)
            assert_only_first_preempted(api, namespace, victims)
        finally:
            with ignore_not_found():
                pods.delete(api, "kube-system", "critical-pod", grace_seconds=0)


@windows_pods(lambda target: [pause_pod(target, "victim-pod", LOW, {EXTENDED_RESOURCE: "1"}, node="win-0",
                                       finalizers=[FINALIZER])],
              upstream=UPSTREAM + "482-545")
@preemption.it("validates pod disruption condition is added to the preempted pod", Conformance,
               twin="[sig-scheduling] SchedulerPreemption [Serial] validates pod disruption condition is added to "
                    "the preempted pod [Conformance]",
               needs=[Capability.RUNS_CONTAINERS], images=["pause"], category="Core.Scheduling")
def test_disruption_condition(api: client.ApiClient, namespace: str, target: Target) -> None:
    node = worker_nodes(target)[0]
    with priority_classes(api, PRIORITIES), extended_resource(api, [node], EXTENDED_RESOURCE, "1"):
        victim = pause_pod(target, "victim-pod", LOW, {EXTENDED_RESOURCE: "1"}, node=node, finalizers=[FINALIZER])
        pods.create(api, namespace, victim)
        try:
            pods.wait_for_pod(api, namespace, "victim-pod", state="Running", timeout=POD_START_TIMEOUT)
            pods.create(api, namespace, pause_pod(target, "preemptor-pod", HIGH, {EXTENDED_RESOURCE: "1"},
                                                  node=node))
            terminating = pods.wait_until(api, namespace, "victim-pod", "to be terminating",
                                          lambda p: p.metadata.deletion_timestamp is not None, timeout=120)
            assert any(c.type == "DisruptionTarget" for c in terminating.status.conditions or []), \
                f"the preempted pod has no DisruptionTarget condition: {pods.describe(terminating)}"
        finally:
            # The finalizer holds the victim until removed here, so that the namespace can go.
            pods.core(api).patch_namespaced_pod("victim-pod", namespace, [
                {"op": "remove", "path": "/metadata/finalizers"}], _content_type="application/json-patch+json")


@windows_pods(lambda target: [*execution_path_replica_sets(target, "win-0"), execution_path_preemptor(target, "win-0")],
              upstream=UPSTREAM + "759-870")
@preemption.describe("PreemptionExecutionPath").it(
    "runs ReplicaSets to verify preemption running path", Conformance,
    twin="[sig-scheduling] SchedulerPreemption [Serial] PreemptionExecutionPath runs ReplicaSets to verify "
         "preemption running path [Conformance]",
    needs=[Capability.RUNS_CONTAINERS], images=["pause"], category="Core.Scheduling")
def test_preemption_execution_path(api: client.ApiClient, namespace: str, target: Target) -> None:
    node = worker_nodes(target)[0]
    hostname = (pods.core(api).read_node(node).metadata.labels or {})["kubernetes.io/hostname"]
    core = pods.core(api)
    version = workloads.listed_version(core.list_namespaced_pod, namespace=namespace)
    with priority_classes(api, {f"p{i}": i for i in range(1, 5)}), \
            extended_resource(api, [node], FAKE_CPU, "1000"), \
            EventStream(core.list_namespaced_pod, namespace=namespace, resource_version=version) as created:
        for i, rs in enumerate(execution_path_replica_sets(target, hostname), start=1):
            retry.call(workloads.apps(api).create_namespaced_replica_set, namespace, rs)
            workloads.wait_for_object(workloads.apps(api).list_namespaced_replica_set, name=f"rs-pod{i}",
                                      namespace=namespace, what=f"replica set rs-pod{i} to have 1 available pod",
                                      condition=lambda r: r.status.available_replicas == 1,
                                      timeout=POD_START_TIMEOUT)
        pods.create(api, namespace, execution_path_preemptor(target, hostname))
        pods.wait_for_pod(api, namespace, "pod4", state="Scheduled", timeout=POD_START_TIMEOUT)

        # Pods of rs-pod1 and rs-pod2 are preempted once each and recreated; rs-pod3's pod stays.
        expected = {"rs-pod1": 2, "rs-pod2": 2, "rs-pod3": 1}
        seen = dict.fromkeys(expected, 0)

        def counted(kind: str, pod: Any) -> bool:
            prefix = pod.metadata.name.rsplit("-", 1)[0]
            if kind == "ADDED" and prefix in seen:
                seen[prefix] += 1
                assert seen[prefix] <= expected[prefix], f"{prefix} had more than {expected[prefix]} pods created"
            return seen == expected

        created.until(f"pod creations per ReplicaSet to be {expected}", counted, timeout=60)
        for kind, pod in created.settle(5.0):  # the state must then stay stable: no over-preemption
            counted(kind, pod)
        assert seen == expected, f"pods created per ReplicaSet: {seen}, expected {expected}"


@preemption.describe("PriorityClass endpoints").it(
    "verify PriorityClass endpoints can be operated with different HTTP methods", Conformance,
    twin="[sig-scheduling] SchedulerPreemption [Serial] PriorityClass endpoints verify PriorityClass endpoints "
         "can be operated with different HTTP methods [Conformance]", category="Core.Scheduling")
def test_priority_class_endpoints(api: client.ApiClient, namespace: str) -> None:
    scheduling, test_id = SCHEDULING(api), str(uuid.uuid4())
    with priority_classes(api, {"p1": 1, "p2": 2}, labels={"e2e": test_id}) as created:
        first, second = created["p1"], created["p2"]
        with pytest.raises(client.exceptions.ApiException):
            scheduling.patch_priority_class("p1", {"value": first.value * 10}, _content_type=STRATEGIC_MERGE_PATCH)
        second_copy = scheduling.read_priority_class("p2")
        second_copy.value = second.value * 10
        with pytest.raises(client.exceptions.ApiException):
            scheduling.replace_priority_class("p2", second_copy)

        scheduling.patch_priority_class("p1", {"description": "updated description"},
                                        _content_type=STRATEGIC_MERGE_PATCH)
        second_copy = scheduling.read_priority_class("p2")
        second_copy.description = "updated description"
        scheduling.replace_priority_class("p2", second_copy)
        scheduling.list_priority_class()
        for original in (first, second):
            live = scheduling.read_priority_class(original.metadata.name)
            assert live.value == original.value, f"{live.metadata.name}: value changed to {live.value}"
            assert live.description == "updated description", f"{live.metadata.name}: {live.description!r}"
            assert int(live.metadata.resource_version) > int(original.metadata.resource_version), \
                "the changed object should have a larger resource version"
        scheduling.delete_collection_priority_class(label_selector=f"e2e={test_id}")
