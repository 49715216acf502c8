"""Probing container, startup (test/e2e/common/node/container_probe.go): startup probes hold back liveness and
readiness until they succeed."""

from __future__ import annotations

import time

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import NodeConformance
from winsuite.authoring.target import Target
from winsuite.k8s import container_status
from winsuite.k8s import manifests
from winsuite.k8s import pods
from winsuite.k8s import probes

probing = Describe(Area("sig-node"), "Probing container")

READY_AFTER_STARTUP = 25.0  # readiness probes must start at once when startup succeeds


def startup_pod(target: Target, command: str, **probe_fields: manifests.Manifest) -> manifests.Manifest:
    """startupPodSpec: busybox running `command` under the given probes."""
    pod = probes.busybox_probe_pod(target.image("busybox"), "startup", ["/bin/sh", "-c", command],
                                   **probe_fields)
    return target.place(pod)


def always(result: str, **fields: int) -> manifests.Manifest:
    """An exec probe running /bin/true or /bin/false."""
    return probes.exec_probe([f"/bin/{result}"], **fields)


@probing.it("should be restarted startup probe fails", NodeConformance,
            twin="[sig-node] Probing container should be restarted startup probe fails [NodeConformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["busybox"])
def test_startup_probe_fails(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = startup_pod(target, "sleep 600",
                      livenessProbe=always("true", initialDelaySeconds=15, failureThreshold=1),
                      startupProbe=always("false", initialDelaySeconds=15, failureThreshold=3))
    probes.run_liveness_test(api, namespace, pod, restarts=1)


@probing.it("should *not* be restarted by liveness probe because startup probe delays it", NodeConformance,
            twin="[sig-node] Probing container should *not* be restarted by liveness probe because startup "
                 "probe delays it [NodeConformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["busybox"])
def test_startup_probe_delays_liveness(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = startup_pod(target, "sleep 600",
                      livenessProbe=always("false", initialDelaySeconds=15, failureThreshold=1),
                      startupProbe=always("false", initialDelaySeconds=15, failureThreshold=60))
    probes.run_liveness_test(api, namespace, pod, restarts=0)


@probing.it("should be restarted by liveness probe after startup probe enables it", NodeConformance,
            twin="[sig-node] Probing container should be restarted by liveness probe after startup probe "
                 "enables it [NodeConformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["busybox"])
def test_startup_probe_enables_liveness(api: client.ApiClient, namespace: str, target: Target) -> None:
    startup = probes.exec_probe(["cat", "/tmp/startup"], initialDelaySeconds=15, failureThreshold=60)
    pod = startup_pod(target, "sleep 10; echo ok >/tmp/startup; sleep 600", startupProbe=startup,
                      livenessProbe=always("false", initialDelaySeconds=15, failureThreshold=1))
    probes.run_liveness_test(api, namespace, pod, restarts=1)


@probing.it("should be ready immediately after startupProbe succeeds", NodeConformance,
            twin="[sig-node] Probing container should be ready immediately after startupProbe succeeds "
                 "[NodeConformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["busybox"])
def test_ready_after_startup(api: client.ApiClient, namespace: str, target: Target) -> None:
    # The 32 s before startup succeeds outlast the 30 s readiness period, so both probe workers have run.
    readiness = probes.exec_probe(["/bin/cat", "/tmp/health"], initialDelaySeconds=0, periodSeconds=30)
    startup = probes.exec_probe(["/bin/cat", "/tmp/startup"], initialDelaySeconds=0,
                                failureThreshold=120, periodSeconds=5)
    command = "echo ok >/tmp/health; sleep 32; echo ok >/tmp/startup; sleep 600"
    pods.create(api, namespace, startup_pod(target, command, readinessProbe=readiness, startupProbe=startup))
    pods.wait_until(api, namespace, "startup", "to pass its startup probe",
                    lambda p: bool(getattr(container_status.status_of(p, "busybox"), "started", False)),
                    timeout=pods.POD_START_TIMEOUT)
    started = time.monotonic()
    pod = pods.wait_for_pod(api, namespace, "startup", state="Ready", timeout=pods.POD_START_TIMEOUT)
    ready_in = time.monotonic() - started
    assert pod.status.phase == "Running", f"a Ready pod should be Running: {pods.describe(pod)}"
    assert ready_in <= READY_AFTER_STARTUP, (
        f"the pod became Ready {ready_in:.0f}s after its startup probe succeeded, more than "
        f"{READY_AFTER_STARTUP:.0f}s: readiness probes did not start right after startup finished")


@probing.it("should override timeoutGracePeriodSeconds when StartupProbe field is set", NodeConformance,
            twin="[sig-node] Probing container should override timeoutGracePeriodSeconds when StartupProbe "
                 "field is set [NodeConformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["busybox"])
def test_startup_grace_period_override(api: client.ApiClient, namespace: str, target: Target) -> None:
    # /tmp/startup never appears: the startup probe fails and kills the container with its own 5 s.
    startup = probes.exec_probe(["/bin/cat", "/tmp/startup"], initialDelaySeconds=10,
                                failureThreshold=1, terminationGracePeriodSeconds=5)
    pod = startup_pod(target, "sleep 1000", startupProbe=startup,
                      livenessProbe=always("true", initialDelaySeconds=15, failureThreshold=1))
    pod["spec"]["terminationGracePeriodSeconds"] = 500
    probes.run_liveness_test(api, namespace, pod, restarts=1, timeout=probes.GRACE_OVERRIDE_TIMEOUT)
