"""Probing container, readiness (test/e2e/common/node/container_probe.go): initial delay, failing probes."""

from __future__ import annotations

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import NodeConformance
from winsuite.authoring.target import Target
from winsuite.k8s import container_status
from winsuite.k8s import pods
from winsuite.k8s import probes
from winsuite.k8s import waits

probing = Describe(Area("sig-node"), "Probing container")

NOT_READY_FOR = 60.0  # how long upstream watches a failing readiness probe keep the pod not Ready


def ready_since(pod: client.V1Pod) -> client.V1PodCondition:
    """GetTransitionTimeForReadyCondition."""
    ready = next((c for c in pod.status.conditions or [] if c.type == "Ready"), None)
    assert ready is not None, f"no Ready condition: {pods.describe(pod)}"
    return ready


def stays_not_ready(api: client.ApiClient, namespace: str, name: str) -> client.V1Pod:
    def not_ready(items: list[client.V1Pod]) -> None:
        assert not pods.is_ready(items[0]), f"pod {namespace}/{name} became Ready: {pods.describe(items[0])}"

    return waits.hold(pods.core(api).list_namespaced_pod, namespace=namespace, name=name,
                      what=f"pod {namespace}/{name} to stay not Ready", duration=NOT_READY_FOR, check=not_ready,
                      describe=pods.describe_all)[0]


@probing.it("with readiness probe should not be ready before initial delay and never restart",
            NodeConformance, Conformance,
            twin="[sig-node] Probing container with readiness probe should not be ready before initial delay "
                 "and never restart [NodeConformance] [Conformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["agnhost"])
def test_readiness_initial_delay(api: client.ApiClient, namespace: str, target: Target) -> None:
    probe = probes.http_probe("/", 80, initialDelaySeconds=probes.PROBE_INITIAL_DELAY)
    pod = pods.start(api, namespace, target.place(probes.webserver_probe_pod(
        target.image("agnhost"), readinessProbe=probe)), state="Ready")
    assert pod.status.phase == "Running", f"a Ready pod should be Running: {pods.describe(pod)}"

    # A single-container pod becomes Ready when its container does.
    started = container_status.started_at(pod, "test-webserver")
    became_ready = ready_since(pod).last_transition_time
    assert (became_ready - started).total_seconds() >= probes.PROBE_INITIAL_DELAY, (
        f"the pod became Ready at {became_ready}, before its {probes.PROBE_INITIAL_DELAY}s initial delay "
        f"(container started at {started})")
    assert container_status.restart_count(pod, "test-webserver") == 0, f"restarted: {pods.describe(pod)}"


@probing.it("with readiness probe that fails should never be ready and never restart", NodeConformance,
            Conformance,
            twin="[sig-node] Probing container with readiness probe that fails should never be ready and "
                 "never restart [NodeConformance] [Conformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["agnhost"])
def test_readiness_failing(api: client.ApiClient, namespace: str, target: Target) -> None:
    probe = probes.http_probe("/", 81)  # nothing listens on 81: the probe always fails
    pods.create(api, namespace, target.place(probes.webserver_probe_pod(target.image("agnhost"),
                                                                        readinessProbe=probe)))
    pod = stays_not_ready(api, namespace, "test-webserver")
    assert container_status.restart_count(pod, "test-webserver") == 0, f"restarted: {pods.describe(pod)}"


@probing.it("should not be ready with an exec readiness probe timeout", NodeConformance,
            twin="[sig-node] Probing container should not be ready with an exec readiness probe timeout "
                 "[NodeConformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["busybox"])
def test_readiness_exec_timeout(api: client.ApiClient, namespace: str, target: Target) -> None:
    probe = probes.exec_probe(["/bin/sh", "-c", "sleep 10"], initialDelaySeconds=15, timeoutSeconds=1,
                              failureThreshold=1)
    pod = probes.busybox_probe_pod(target.image("busybox"), "busybox", ["/bin/sh", "-c", "sleep 600"],
                                   readinessProbe=probe)
    pods.start(api, namespace, target.place(pod))  # waitForNotPending: the probes have begun
    stays_not_ready(api, namespace, "busybox")
