"""Pods (test/e2e/common/node/pods.go): status, lifecycle, updates, deadlines, readiness gates, containers."""

from __future__ import annotations

import ipaddress
import time
from typing import Any

from kubernetes import client
from kubernetes import watch

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import NodeConformance
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import manifests
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import waits

pods_ = Describe(Area("sig-node"), "Pods")

HOST_IP_TIMEOUT = 120.0  # testHostIP's hostIPTimeout
POD_DELETE_TIMEOUT = 120.0  # framework.PodDeleteTimeout is 5m; a pause pod goes in seconds
READINESS_TIMEOUT = 60.0
SYNC_LOOP_FREQUENCY = 10.0  # the kubelet's status sync: long enough for a wrong Ready to show


def collection_pods(target: Target, names: list[str]) -> list[dict[str, Any]]:
    """The pods DeleteCollection removes, labelled type=Testing."""
    made = []
    for name in names:
        pod = manifests.pod(name, [manifests.container("token-test", target.image("agnhost"))],
                            labels={"type": "Testing"}, terminationGracePeriodSeconds=1, restartPolicy="Never")
        made.append(target.place(manifests.restricted(pod, target.os)))
    return made


def patch_status_pod(target: Target, name: str) -> dict[str, Any]:
    pod = manifests.pod(name, [manifests.container("agnhost", target.image("agnhost"))],
                        labels={"e2e": name}, terminationGracePeriodSeconds=1)
    return target.place(manifests.restricted(pod, target.os))


def readiness_gates_pod(target: Target, name: str, *gates: str) -> dict[str, Any]:
    busybox = manifests.container("pod-readiness-gate", target.image("busybox"),
                                  command=["/bin/sh", "-c", "echo container is alive; sleep 10000"])
    pod = manifests.pod(name, [busybox], labels={"test": "pod-readiness-gate"},
                        readinessGates=[{"conditionType": gate} for gate in gates])
    return target.place(manifests.restricted(pod, target.os))


def pause_pod(target: Target, name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    pod = manifests.pod(name, [manifests.container("pause", target.image("pause"))], labels=labels)
    return target.place(manifests.restricted(pod, target.os))


def labelled(api: client.ApiClient, namespace: str, selector: str) -> list[client.V1Pod]:
    return list(retry.call(pods.core(api).list_namespaced_pod, namespace, label_selector=selector).items)


def patch(api: client.ApiClient, namespace: str, name: str, body: dict[str, Any], *,
          status: bool = False) -> Any:
    core = pods.core(api)
    call = core.patch_namespaced_pod_status if status else core.patch_namespaced_pod
    return retry.call(call, name, namespace, body)


@windows_pods(lambda target: [pause_pod(target, "pod-hostip")], upstream="test/e2e/common/node/pods.go:208-228")
@pods_.it("should get a host IP", NodeConformance, Conformance,
          twin="[sig-node] Pods should get a host IP [NodeConformance] [Conformance]",
          needs=[Capability.RUNS_CONTAINERS], images=["pause"], category="Core.Scheduling")
def test_pod_host_ip(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "pod-hostip"
    pods.start(api, namespace, pause_pod(target, name))
    pod = pods.wait_until(api, namespace, name, "to have a host IP", lambda p: bool(p.status.host_ip),
                          timeout=HOST_IP_TIMEOUT)
    ipaddress.ip_address(pod.status.host_ip)  # raises on anything but an IP address


@windows_pods(lambda target: [pause_pod(target, "pod-submit-remove", {"name": "foo", "time": "1"})],
              upstream="test/e2e/common/node/pods.go:230-346")
@pods_.it("should be submitted and removed", NodeConformance, Conformance,
          twin="[sig-node] Pods should be submitted and removed [NodeConformance] [Conformance]",
          needs=[Capability.RUNS_CONTAINERS], images=["pause"])
def test_pod_submitted_and_removed(api: client.ApiClient, namespace: str, target: Target) -> None:
    name, value = "pod-submit-remove", str(time.time_ns())
    selector = f"time={value}"
    listing = retry.call(pods.core(api).list_namespaced_pod, namespace, label_selector=selector)
    assert not listing.items, f"pods with {selector} exist before the test made any"
    stream = watch.Watch()
    events = stream.stream(pods.core(api).list_namespaced_pod, namespace, label_selector=selector,
                           resource_version=listing.metadata.resource_version, timeout_seconds=240)
    try:
        pods.create(api, namespace, pause_pod(target, name, {"name": "foo", "time": value}))
        assert len(labelled(api, namespace, selector)) == 1, "the submitted pod is not listed"
        first = next(events, None)
        assert first is not None and first["type"] == "ADDED", f"failed to observe pod creation: {first}"

        pods.wait_for_pod(api, namespace, name, state="Running", timeout=pods.POD_START_TIMEOUT)
        pods.delete(api, namespace, name, grace_seconds=30)
        deleted = next((e["object"] for e in events if e["type"] == "DELETED"), None)
    finally:
        stream.stop()
    assert deleted is not None, "the watch ended without the pod's deletion"
    assert deleted.metadata.deletion_timestamp is not None, "the deleted pod had no deletionTimestamp"
    assert deleted.spec.termination_grace_period_seconds, "the deleted pod had a zero grace period"
    assert not labelled(api, namespace, selector), "the pod is still listed after its deletion"


@windows_pods(lambda target: [pause_pod(target, "pod-update", {"name": "foo", "time": "1"})],
              upstream="test/e2e/common/node/pods.go:348-400")
@pods_.it("should be updated", NodeConformance, Conformance,
          twin="[sig-node] Pods should be updated [NodeConformance] [Conformance]",
          needs=[Capability.RUNS_CONTAINERS], images=["pause"])
def test_pod_updated(api: client.ApiClient, namespace: str, target: Target) -> None:
    name, value = "pod-update", str(time.time_ns())
    pods.start(api, namespace, pause_pod(target, name, {"name": "foo", "time": value}))
    assert len(labelled(api, namespace, f"time={value}")) == 1, "the pod is not found by its label"

    value = str(time.time_ns())
    patch(api, namespace, name, {"metadata": {"labels": {"time": value}}})
    pods.wait_for_pod(api, namespace, name, state="Running", timeout=pods.POD_START_TIMEOUT)
    assert len(labelled(api, namespace, f"time={value}")) == 1, "the pod is not found by its updated label"


@windows_pods(lambda target: [pause_pod(target, "pod-update-activedeadlineseconds", {"name": "foo", "time": "1"})],
              upstream="test/e2e/common/node/pods.go:402-446")
@pods_.it("should allow activeDeadlineSeconds to be updated", NodeConformance, Conformance,
          twin="[sig-node] Pods should allow activeDeadlineSeconds to be updated "
               "[NodeConformance] [Conformance]",
          needs=[Capability.RUNS_CONTAINERS], images=["pause"])
def test_pod_active_deadline_updated(api: client.ApiClient, namespace: str, target: Target) -> None:
    name, value = "pod-update-activedeadlineseconds", str(time.time_ns())
    pods.start(api, namespace, pause_pod(target, name, {"name": "foo", "time": value}))
    assert len(labelled(api, namespace, f"time={value}")) == 1, "the pod is not found by its label"

    patch(api, namespace, name, {"spec": {"activeDeadlineSeconds": 5}})
    pods.wait_until(api, namespace, name, "to be terminated with reason DeadlineExceeded",
                    lambda p: p.status.phase == "Failed" and p.status.reason == "DeadlineExceeded",
                    timeout=pods.POD_START_TIMEOUT)


@windows_pods(lambda target: [readiness_gates_pod(target, "pod-ready", "k8s.io/test-condition1",
                                                  "k8s.io/test-condition2")],
              upstream="test/e2e/common/node/pods.go:780-842")
@pods_.it("should support pod readiness gates", NodeConformance,
          twin="[sig-node] Pods should support pod readiness gates [NodeConformance]",
          needs=[Capability.RUNS_CONTAINERS], images=["busybox"])
def test_pod_readiness_gates(api: client.ApiClient, namespace: str, target: Target) -> None:
    name, gate1, gate2 = "pod-ready", "k8s.io/test-condition1", "k8s.io/test-condition2"
    running = pods.start(api, namespace, readiness_gates_pod(target, name, gate1, gate2))
    assert not pods.is_ready(running), "the pod is Ready before any readiness gate is True"

    def set_gate(gate: str, status: str) -> None:
        condition = {"type": gate, "status": status}
        patch(api, namespace, name, {"status": {"conditions": [condition]}}, status=True)

    set_gate(gate1, "True")
    def not_ready(items: list[client.V1Pod]) -> None:
        assert not pods.is_ready(items[0]), f"pod {name} is Ready with one gate False: {pods.describe(items[0])}"

    waits.hold(pods.core(api).list_namespaced_pod, namespace=namespace, name=name,
               what=f"pod {name} to stay not Ready with one of two readiness gates True", check=not_ready,
               duration=SYNC_LOOP_FREQUENCY, describe=pods.describe_all)
    set_gate(gate2, "True")
    pods.wait_for_pod(api, namespace, name, state="Ready", timeout=READINESS_TIMEOUT)
    set_gate(gate1, "False")
    pods.wait_until(api, namespace, name, "to be not Ready", lambda p: not pods.is_ready(p),
                    timeout=READINESS_TIMEOUT)


@windows_pods(lambda target: collection_pods(target, ["test-pod-1", "test-pod-2", "test-pod-3"]),
              upstream="test/e2e/common/node/pods.go:853-901")
@pods_.it("should delete a collection of pods", Conformance,
          twin="[sig-node] Pods should delete a collection of pods [Conformance]",
          needs=[Capability.RUNS_CONTAINERS], images=["agnhost"])
def test_pod_delete_collection(api: client.ApiClient, namespace: str, target: Target) -> None:
    names = ["test-pod-1", "test-pod-2", "test-pod-3"]
    for pod in collection_pods(target, names):
        pods.create(api, namespace, pod)
    for name in names:
        pods.wait_for_pod(api, namespace, name, state="Ready", timeout=pods.POD_START_TIMEOUT)

    retry.call(pods.core(api).delete_collection_namespaced_pod, namespace, label_selector="type=Testing",
               grace_period_seconds=1)
    pods.wait_for_no_pods(api, namespace, label_selector="type=Testing",
                          what="the collection of pods to be deleted", timeout=POD_DELETE_TIMEOUT)


@windows_pods(lambda target: [patch_status_pod(target, "pod-patch-status")],
              upstream="test/e2e/common/node/pods.go:1091-1129")
@pods_.it("should patch a pod status", Conformance,
          twin="[sig-node] Pods should patch a pod status [Conformance]",
          needs=[Capability.RUNS_CONTAINERS], images=["agnhost"])
def test_pod_patch_status(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "pod-patch-status"
    pods.start(api, namespace, patch_status_pod(target, name))

    patched = patch(api, namespace, name, {"metadata": {"annotations": {"patchedstatus": "true"}},
                                           "status": {"message": "Patched by e2e test", "reason": "E2E"}},
                    status=True)
    assert patched.status.message == "Patched by e2e test", f"status.message is {patched.status.message!r}"
    assert patched.status.reason == "E2E", f"status.reason is {patched.status.reason!r}"


@pods_.it("should run several containers side by side, each with its own filesystem",
          needs=[Capability.RUNS_CONTAINERS, Capability.EXEC], images=["busybox"])
def test_pod_with_several_containers(api: client.ApiClient, namespace: str, target: Target) -> None:
    """KEP-116 "What works today": single or multiple containers per Pod with process isolation."""
    name, first, second = "pod-several-containers", "first", "second"
    sleeper = ["/bin/sh", "-c", "trap exit TERM; while true; do sleep 1; done"]
    pod = manifests.pod(name, [manifests.container(first, target.image("busybox"), command=sleeper),
                               manifests.container(second, target.image("busybox"), command=sleeper)],
                        terminationGracePeriodSeconds=0)
    running = pods.start(api, namespace, target.place(pod), state="Ready")
    ids = {s.name: s.container_id for s in running.status.container_statuses}
    assert len(set(ids.values())) == 2 and all(ids.values()), f"expected two distinct containers, got {ids}"

    def sh(container: str, command: str) -> pods.ExecResult:
        return pods.exec_(api, namespace, name, ["/bin/sh", "-c", command], container=container)

    sh(first, "echo written-by-first > /tmp/owner").check()
    assert sh(first, "cat /tmp/owner").check().stdout.strip() == "written-by-first"
    other = sh(second, "cat /tmp/owner")
    assert other.exit_code != 0, f"the second container sees the first one's /tmp/owner: {other.stdout!r}"
    hostnames = {c: sh(c, "hostname").check().stdout.strip() for c in (first, second)}
    assert hostnames[first] == hostnames[second], f"one pod's containers report different hosts: {hostnames}"
