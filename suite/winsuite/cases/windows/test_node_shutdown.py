"""Graceful node shutdown on Windows (node_shutdown.go): pods stop in order, critical ones last, when the node
is about to restart."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Disruptive
from winsuite.authoring.naming import Feature
from winsuite.authoring.naming import Provokes
from winsuite.authoring.naming import Serial
from winsuite.authoring.naming import Slow
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import kubelet
from winsuite.k8s import manifests
from winsuite.k8s import namespaces
from winsuite.k8s import nodes
from winsuite.k8s import objects
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import waits

graceful_shutdown = Describe(Area("sig-windows"), Feature("Windows"), "GracefulNodeShutdown", Serial, Disruptive,
                             Slow)

POD_STATUS_UPDATE_TIMEOUT = 90.0
# Critical pods start to shut down after shutdownGracePeriod - shutdownGracePeriodCriticalPods (20 s - 10 s).
CRITICAL_DELAY = 10.0
CONDITIONS_TIMEOUT = 300.0
SHUTDOWN_REASON = "Terminated"
SHUTDOWN_MESSAGE = "Pod was terminated in response to imminent node shutdown."
CRITICAL = "system-node-critical"
# Records the boot and install dates, then asks Windows to restart in 60 s: the kubelet sees a shutdown coming.
RESTART = ["powershell.exe", "-Command", "$os = Get-WmiObject -Class win32_operatingsystem;",
           "[Environment]::SetEnvironmentVariable(\"TMP_BOOT_DATE\", $os.LastBootUpTime, \"Machine\");",
           "[Environment]::SetEnvironmentVariable(\"TMP_INSTALL_DATE\", $os.InstallDate, \"Machine\");",
           "shutdown.exe -r -t 60"]


def grace_period_pod(target: Target, name: str, node: str, grace: int, critical: bool) -> dict[str, Any]:
    """getGracePeriodOverrideTestPod: agnhost netexec delaying its shutdown far beyond the grace period; a
    critical one is marked as a static pod of system-node-critical priority (kubelettypes.IsCriticalPod)."""
    netexec = manifests.container(name, target.image("agnhost"),
                                  command=["/agnhost", "netexec", "--delay-shutdown", "9999"])
    priority: dict[str, Any] = {"priorityClassName": CRITICAL} if critical else {}
    pod = manifests.pod(name, [netexec], terminationGracePeriodSeconds=grace,
                        annotations={"kubernetes.io/config.source": "file"} if critical else None, **priority)
    return manifests.pin_to_node(target.place(pod), node)


def is_critical(pod: client.V1Pod) -> bool:
    return bool(pod.spec and pod.spec.priority_class_name == CRITICAL)


def is_shut_down(pod: client.V1Pod) -> bool:
    status = pod.status or client.V1PodStatus()
    not_ready = any(c.type == "ContainersReady" and c.status == "False" for c in status.conditions or [])
    return (status.message == SHUTDOWN_MESSAGE and status.reason == SHUTDOWN_REASON and not_ready
            and status.phase == "Failed")


def has_false_condition(pod: client.V1Pod) -> bool:
    """isPodReadyToStartConditionSetToFalse: some condition of the pod is False."""
    return any(c.status == "False" for c in (pod.status or client.V1PodStatus()).conditions or [])


def failed_but_ready(pod: client.V1Pod) -> str | None:
    """isPodReadyWithFailedStatus: a status that must never happen (kubernetes#108594)."""
    return pods.describe(pod) if pods.phase_of(pod) == "Failed" and pods.is_ready(pod) else None


def list_period_pods(api: client.ApiClient, namespace: str, node: str, count: int) -> tuple[list[client.V1Pod], str]:
    """The test's "period" pods on the node (there must be `count` of them) and the listing's resourceVersion."""
    listing = retry.call(pods.core(api).list_namespaced_pod, namespace, field_selector=f"spec.nodeName={node}")
    period = [p for p in listing.items if objects.name_of(p).startswith("period")]
    assert len(period) == count, f"the number of pods is not as expected: {len(period)} != {count}"
    return period, str(listing.metadata.resource_version)


def period_pods(api: client.ApiClient, namespace: str, node: str, count: int) -> list[client.V1Pod]:
    return list_period_pods(api, namespace, node, count)[0]


def eventually_about_pods(api: client.ApiClient, namespace: str, node: str, count: int, what: str,
                          check: Callable[[client.V1Pod], str | None], timeout: float) -> None:
    """Poll the test's "period" pods on the node until `check` finds nothing wrong with any of them."""

    def all_fine() -> str:
        period = period_pods(api, namespace, node, count)
        problems = [problem for p in period if (problem := check(p))]
        detail = "; ".join(problems)
        assert not problems, detail
        return detail

    waits.poll(what, all_fine, timeout=timeout)


def shutdown_order(pod: client.V1Pod) -> str | None:
    if is_critical(pod) and is_shut_down(pod):
        return f"critical pod {objects.name_of(pod)} should not be shut down yet: {pods.describe(pod)}"
    if not is_critical(pod) and not is_shut_down(pod):
        return f"pod {objects.name_of(pod)} should be shut down: {pods.describe(pod)}"
    return None


def shutdown_pods(target: Target, node: str) -> list[dict[str, Any]]:
    """The batch (two plain, two critical grace periods), the critical pod that keeps the node busy until the
    critical pods have reached their end, and the HostProcess pod that restarts the node."""
    batch = [grace_period_pod(target, f"period-20-{uuid.uuid4()}", node, 20, critical=False),
             grace_period_pod(target, f"period-25-{uuid.uuid4()}", node, 25, critical=False),
             grace_period_pod(target, f"period-critical-5-{uuid.uuid4()}", node, 5, critical=True),
             grace_period_pod(target, f"period-critical-10-{uuid.uuid4()}", node, 10, critical=True)]
    delay = grace_period_pod(target, f"delay-shutdown-20-{uuid.uuid4()}", node, 20, critical=True)
    restart = manifests.host_process_pod("reboot-host-test-pod", [
        manifests.container("reboot-computer-test", target.image("agnhost"), command=RESTART)])
    return [*batch, delay, manifests.pin_to_node(target.place(restart), node)]


@windows_pods(lambda target: shutdown_pods(target, "win-0"), upstream="test/e2e/windows/node_shutdown.go:52-232")
@graceful_shutdown.it("should be able to gracefully shutdown pods with various grace periods",
                      twin="[sig-windows] [Feature:Windows] GracefulNodeShutdown [Serial] [Disruptive] [Slow] should "
                           "be able to gracefully shutdown pods with various grace periods",
                      category="Extend.Worker", needs=[Capability.WINDOWS_KERNEL, Capability.KUBELET_CONFIGZ],
                      images=["agnhost"], provokes=[Provokes.NODE_DISRUPTION])
def test_graceful_node_shutdown(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    node = objects.name_of(nodes.find_windows_node(api))
    kubelet.skip_unless_graceful_node_shutdown(api, node)
    namespaces.allow_privileged_pods(api, namespace)
    *batch, delay, restart = shutdown_pods(target, node)
    pods.create_all(api, namespace, batch)
    listed, resource_version = list_period_pods(api, namespace, node, len(batch))

    # Watched from the batch's listing, without gaps, while the node shuts down (watchtools.Until).
    invalid = waits.BackgroundWatch(pods.core(api).list_namespaced_pod, resource_version, violates=failed_but_ready,
                                    namespace=namespace)
    with invalid:
        not_ready = [pods.describe(p) for p in listed if pods.phase_of(p) != "Running" or not pods.is_ready(p)]
        assert not not_ready, f"failed to start batch pods: {not_ready}"
        # Keeps the node busy until the critical pods have reached their end.
        pods.start(api, namespace, delay, state="Ready")
        pods.create(api, namespace, restart)
        pods.assert_succeeded(api, namespace, "reboot-host-test-pod")

        eventually_about_pods(api, namespace, node, len(batch), "non-critical pods to shut down first",
                              shutdown_order, POD_STATUS_UPDATE_TIMEOUT)
        eventually_about_pods(api, namespace, node, len(batch), "every pod to shut down",
                              lambda p: None if is_shut_down(p) else f"{pods.describe(p)} should be shut down",
                              POD_STATUS_UPDATE_TIMEOUT + CRITICAL_DELAY)
        eventually_about_pods(api, namespace, node, len(batch), "every pod to have a False condition",
                              lambda p: None if has_false_condition(p) else f"{pods.describe(p)}: no False condition",
                              CONDITIONS_TIMEOUT)
    invalid.check("invalid pod status (Failed while Ready)")
