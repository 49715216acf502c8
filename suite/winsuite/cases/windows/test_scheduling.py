"""Scheduling Windows and Linux pods (seed 002): taints, nodeSelectors, windows-build and RuntimeClass scheduling.

These are about the scheduler and admission, so they may land on simulated nodes (target.scheduling_only()):
they check where a pod is bound, never that it runs.
"""

from __future__ import annotations

import secrets
from collections.abc import Generator
from typing import Any

import pytest
from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import ClusterSession
from winsuite.authoring.target import Target
from winsuite.authoring.targeting import OS_LABEL
from winsuite.authoring.targeting import SIMULATED_NODE_TAINT
from winsuite.authoring.targeting import WINDOWS_BUILD_LABEL
from winsuite.authoring.targeting import Placement
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import events
from winsuite.k8s import pods
from winsuite.k8s import retry

scheduling = Describe(Area("sig-windows"), "Scheduling")
windows_scheduling = scheduling.describe("Windows pods")
linux_scheduling = scheduling.describe("Linux pods")

SCHEDULE_TIMEOUT = 120.0


def pause_pod(name: str, image: str, os_name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"os": {"name": os_name}, "containers": [{"name": "pause", "image": image}]}}


def no_toleration_pod(target: Target) -> dict[str, Any]:
    """A Windows pod with the OS selector that tolerates only the simulated nodes' taint, not the Windows one."""
    pod = pause_pod("no-toleration", target.image("pause", os="windows"), "windows")
    pod["spec"]["nodeSelector"] = {OS_LABEL: "windows"}
    pod["spec"]["tolerations"] = [SIMULATED_NODE_TAINT.toleration()]
    return pod


def with_toleration_pod(target: Target, run_placement: Placement) -> dict[str, Any]:
    return target.placed(windows_placement(run_placement)).place(
        pause_pod("with-toleration", target.image("pause", os="windows"), "windows"))


def build_pod(target: Target, run_placement: Placement, build: str) -> dict[str, Any]:
    return target.placed(windows_placement(run_placement, build)).place(
        pause_pod(f"build-{build.replace('.', '-')}", target.image("pause", os="windows"), "windows"))


def runtime_class_pod(target: Target, runtime_class: str) -> dict[str, Any]:
    """A Windows pod with no placement of its own: the RuntimeClass's scheduling block gives it."""
    pod = pause_pod("runtime-class", target.image("pause", os="windows"), "windows")
    pod["spec"]["runtimeClassName"] = runtime_class
    pod["spec"]["tolerations"] = [SIMULATED_NODE_TAINT.toleration()]
    return pod


def linux_pods(target: Target) -> list[dict[str, Any]]:
    """Pods written for Linux without any nodeSelector, as most charts are."""
    made = []
    for name in (f"linux-{i}" for i in range(4)):
        pod = pause_pod(name, target.image("pause", os="linux"), "linux")
        pod["spec"]["tolerations"] = [SIMULATED_NODE_TAINT.toleration()]
        made.append(pod)
    return made


NO_TWIN = "no twin: KEP-116 and seed 002 (Windows pods are placed by nodeSelector, taint and RuntimeClass)"


def node_of(api: client.ApiClient, pod: client.V1Pod) -> client.V1Node:
    return retry.call(client.CoreV1Api(api).read_node, pod.spec.node_name)


def windows_placement(base: Placement, build: str | None = None) -> Placement:
    """The run's Windows placement (whatever the run's target OS), tolerating the simulated nodes."""
    return Placement("windows", build, base.windows_taint, base.runtime_class, tolerate_simulated_nodes=True)


def skip_unless_every_windows_node_is_tainted(cluster: ClusterSession) -> None:
    """The taint is what keeps pods without a toleration off Windows nodes: a cluster that leaves some Windows node
    untainted (kwokctl's nodes, a pool made without it) makes no promise these tests could check."""
    taint = cluster.placement.windows_taint
    windows = [n for n in cluster.facts.nodes if n.os == "windows" and n.ready]
    if taint is None or not all(any(t.startswith(f"{taint.key}={taint.value}:") for t in n.taints) for n in windows):
        pytest.skip(f"requires every Windows node tainted {taint} as seed 002 recommends "
                    f"(found: {[(n.name, n.taints) for n in windows]})")


@windows_pods(lambda target: [no_toleration_pod(target)], upstream=NO_TWIN)
@windows_scheduling.it("should stay Pending on tainted Windows nodes without a toleration", category="Core.Scheduling",
                 needs=[Capability.WINDOWS_NODES], images=["pause"])
def test_windows_pod_without_toleration_stays_pending(api: client.ApiClient, namespace: str, target: Target,
                                                      cluster: ClusterSession) -> None:
    skip_unless_every_windows_node_is_tainted(cluster)
    pods.create(api, namespace, no_toleration_pod(target))
    event = events.wait_for_event(api, namespace, involved="no-toleration", reason="FailedScheduling",
                                  timeout=SCHEDULE_TIMEOUT)
    assert "untolerated taint" in event.message, event.message
    assert pods.get(api, namespace, "no-toleration").spec.node_name is None, "the pod was bound to a node"


@windows_pods(lambda target: [with_toleration_pod(target, target.placement)], upstream=NO_TWIN)
@windows_scheduling.it("should land on a Windows node with the kubernetes.io/os nodeSelector and the toleration",
                 category="Core.Scheduling", needs=[Capability.WINDOWS_NODES], images=["pause"])
def test_windows_pod_with_selector_and_toleration(api: client.ApiClient, namespace: str, target: Target,
                                                  cluster: ClusterSession) -> None:
    pods.create(api, namespace, with_toleration_pod(target, cluster.placement))
    bound = pods.wait_for_pod(api, namespace, "with-toleration", state="Scheduled", timeout=SCHEDULE_TIMEOUT)
    node = node_of(api, bound)
    assert node.metadata.labels.get(OS_LABEL) == "windows", f"bound to {node.metadata.name} ({node.metadata.labels})"


@windows_pods(lambda target: [build_pod(target, target.placement, b) for b in ("10.0.17763", "10.0.20348")],
              upstream=NO_TWIN)
@windows_scheduling.it("should land on the node whose node.kubernetes.io/windows-build matches",
                 category="Core.Scheduling", needs=[Capability.MIXED_WINDOWS_BUILDS], images=["pause"])
def test_windows_build_selects_the_node(api: client.ApiClient, namespace: str, target: Target,
                                        cluster: ClusterSession) -> None:
    builds = sorted({n.windows_build for n in cluster.facts.nodes if n.os == "windows" and n.windows_build})
    for build in builds:
        placed = build_pod(target, cluster.placement, build)
        name = placed["metadata"]["name"]
        pods.create(api, namespace, placed)
        node = node_of(api, pods.wait_for_pod(api, namespace, name, state="Scheduled", timeout=SCHEDULE_TIMEOUT))
        assert node.metadata.labels.get(WINDOWS_BUILD_LABEL) == build, (
            f"a pod selecting Windows build {build} was bound to {node.metadata.name} "
            f"(build {node.metadata.labels.get(WINDOWS_BUILD_LABEL)})")


@pytest.fixture
def windows_runtime_class(api: client.ApiClient, cluster: ClusterSession) -> Generator[client.V1RuntimeClass]:
    """Seed 002's RuntimeClass example: its scheduling block carries the Windows selector and toleration."""
    build = next(n.windows_build for n in cluster.facts.nodes if n.os == "windows" and n.windows_build)
    taint = cluster.placement.windows_taint
    body = client.V1RuntimeClass(
        metadata=client.V1ObjectMeta(name=f"winsuite-windows-{secrets.token_hex(3)}"),
        handler="example-container-runtime-handler",
        scheduling=client.V1Scheduling(
            node_selector={OS_LABEL: "windows", "kubernetes.io/arch": "amd64", WINDOWS_BUILD_LABEL: build},
            tolerations=[client.V1Toleration(**taint.toleration())] if taint else None,
        ),
    )
    created = retry.call(client.NodeV1Api(api).create_runtime_class, body)
    yield created
    retry.call(client.NodeV1Api(api).delete_runtime_class, created.metadata.name)


@windows_pods(lambda target: [runtime_class_pod(target, "winsuite-windows-ababab")], upstream=NO_TWIN)
@windows_scheduling.it("should get the nodeSelector and tolerations of a RuntimeClass with scheduling",
                 category="Core.Scheduling", needs=[Capability.WINDOWS_NODES], images=["pause"])
def test_runtime_class_scheduling(api: client.ApiClient, namespace: str, target: Target,
                                  windows_runtime_class: client.V1RuntimeClass) -> None:
    created = pods.create(api, namespace, runtime_class_pod(target, windows_runtime_class.metadata.name))
    scheduling_ = windows_runtime_class.scheduling
    for key, value in scheduling_.node_selector.items():
        assert (created.spec.node_selector or {}).get(key) == value, (
            f"admission did not add {key}={value} from the RuntimeClass: {created.spec.node_selector}")
    for toleration in scheduling_.tolerations or []:
        assert any(t.key == toleration.key and t.value == toleration.value and t.effect == toleration.effect
                   for t in created.spec.tolerations or []), f"missing toleration {toleration.key}"
    node = node_of(api, pods.wait_for_pod(api, namespace, "runtime-class", state="Scheduled",
                                          timeout=SCHEDULE_TIMEOUT))
    for key, value in scheduling_.node_selector.items():
        assert node.metadata.labels.get(key) == value, f"bound to {node.metadata.name} without {key}={value}"


@windows_pods(linux_pods, upstream=NO_TWIN)
@linux_scheduling.it("should never land on tainted Windows nodes", category="Core.Scheduling",
               needs=[Capability.WINDOWS_NODES], images=["pause"], pods_os="linux")
def test_linux_pods_stay_off_windows_nodes(api: client.ApiClient, namespace: str, target: Target,
                                           cluster: ClusterSession) -> None:
    """Pods written for Linux without any nodeSelector (as most charts are) must not reach Windows nodes."""
    skip_unless_every_windows_node_is_tainted(cluster)
    made = linux_pods(target)
    names = [m["metadata"]["name"] for m in made]
    for pod in made:
        pods.create(api, namespace, pod)
    for name in names:
        bound = pods.wait_for_pod(api, namespace, name, state="Scheduled", timeout=SCHEDULE_TIMEOUT)
        labels = node_of(api, bound).metadata.labels
        assert labels.get(OS_LABEL) != "windows", f"Linux pod {name} was bound to Windows node {bound.spec.node_name}"
