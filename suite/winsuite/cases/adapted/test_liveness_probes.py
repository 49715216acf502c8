"""Probing container, liveness (test/e2e/common/node/container_probe.go): exec, HTTP, TCP and gRPC probes."""

from __future__ import annotations

import urllib.parse

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import NodeConformance
from winsuite.authoring.target import Target
from winsuite.k8s import manifests
from winsuite.k8s import probes

probing = Describe(Area("sig-node"), "Probing container")


def busybox_pod(target: Target, command: str, **probe_fields: manifests.Manifest) -> manifests.Manifest:
    pod = probes.busybox_probe_pod(target.image("busybox"), "busybox", ["/bin/sh", "-c", command],
                                   **probe_fields)
    return target.place(pod)


def liveness_pod(target: Target, probe: manifests.Manifest) -> manifests.Manifest:
    """livenessPodSpec: agnhost liveness, whose /healthz fails 10 s after it starts."""
    pod = manifests.agnhost_pod(target.image("agnhost"), "liveness", "liveness", labels={"test": "liveness"})
    pod["spec"]["containers"][0]["livenessProbe"] = probe
    return target.place(pod)


def grpc_pod(target: Target, probe: manifests.Manifest) -> manifests.Manifest:
    """gRPCServerPodSpec: agnhost serving the gRPC health protocol on 5000."""
    server = manifests.container("agnhost", target.image("agnhost"),
                                 command=["/agnhost", "grpc-health-checking"],
                                 ports=[{"containerPort": 5000}, {"containerPort": 8080}],
                                 livenessProbe=probe)
    return target.place(manifests.pod("test-grpc", [server]))


def exec_health_probe() -> manifests.Manifest:
    # A 5 s timeout: the default 1 s is aggressive on loaded CI nodes (upstream's words).
    return probes.exec_probe(["cat", "/tmp/health"], initialDelaySeconds=15, timeoutSeconds=5,
                             failureThreshold=1)


@probing.it('should be restarted with a exec "cat /tmp/health" liveness probe', NodeConformance,
            Conformance,
            twin='[sig-node] Probing container should be restarted with a exec "cat /tmp/health" liveness '
                 "probe [NodeConformance] [Conformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["busybox"])
def test_liveness_exec_restart(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = busybox_pod(target, "echo ok >/tmp/health; sleep 10; rm -rf /tmp/health; sleep 600",
                      livenessProbe=exec_health_probe())
    probes.run_liveness_test(api, namespace, pod, restarts=1)


@probing.it('should *not* be restarted with a exec "cat /tmp/health" liveness probe', NodeConformance,
            Conformance,
            twin='[sig-node] Probing container should *not* be restarted with a exec "cat /tmp/health" '
                 "liveness probe [NodeConformance] [Conformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["busybox"])
def test_liveness_exec_no_restart(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = busybox_pod(target, "echo ok >/tmp/health; sleep 600", livenessProbe=exec_health_probe())
    probes.run_liveness_test(api, namespace, pod, restarts=0)


@probing.it("should be restarted with a /healthz http liveness probe", NodeConformance, Conformance,
            twin="[sig-node] Probing container should be restarted with a /healthz http liveness probe "
                 "[NodeConformance] [Conformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["agnhost"])
def test_liveness_http_restart(api: client.ApiClient, namespace: str, target: Target) -> None:
    probe = probes.http_probe("/healthz", 8080, initialDelaySeconds=15, failureThreshold=1)
    probes.run_liveness_test(api, namespace, liveness_pod(target, probe), restarts=1)


@probing.it("should *not* be restarted with a tcp:8080 liveness probe", NodeConformance, Conformance,
            twin="[sig-node] Probing container should *not* be restarted with a tcp:8080 liveness probe "
                 "[NodeConformance] [Conformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["agnhost"])
def test_liveness_tcp_no_restart(api: client.ApiClient, namespace: str, target: Target) -> None:
    # /healthz starts failing after 10 s, but the socket stays open: a TCP probe keeps passing.
    probe = probes.tcp_probe(8080, initialDelaySeconds=15, failureThreshold=1)
    probes.run_liveness_test(api, namespace, liveness_pod(target, probe), restarts=0)


@probing.it("should *not* be restarted with a /healthz http liveness probe", NodeConformance, Conformance,
            twin="[sig-node] Probing container should *not* be restarted with a /healthz http liveness probe "
                 "[NodeConformance] [Conformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["agnhost"])
def test_liveness_http_no_restart(api: client.ApiClient, namespace: str, target: Target) -> None:
    # failureThreshold 5 tolerates nodes that are slow to bring the container up (upstream's words).
    probe = probes.http_probe("/", 80, initialDelaySeconds=15, timeoutSeconds=5, failureThreshold=5)
    pod = target.place(probes.webserver_probe_pod(target.image("agnhost"), livenessProbe=probe))
    probes.run_liveness_test(api, namespace, pod, restarts=0)


@probing.it("should be restarted with an exec liveness probe with timeout", NodeConformance,
            twin="[sig-node] Probing container should be restarted with an exec liveness probe with timeout "
                 "[NodeConformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["busybox"])
def test_liveness_exec_timeout(api: client.ApiClient, namespace: str, target: Target) -> None:
    probe = probes.exec_probe(["/bin/sh", "-c", "sleep 10"], initialDelaySeconds=15, timeoutSeconds=1,
                              failureThreshold=1)
    probes.run_liveness_test(api, namespace, busybox_pod(target, "sleep 600", livenessProbe=probe),
                             restarts=1)


@probing.it("should be restarted with a failing exec liveness probe that took longer than the timeout",
            NodeConformance,
            twin="[sig-node] Probing container should be restarted with a failing exec liveness probe that "
                 "took longer than the timeout [NodeConformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["busybox"])
def test_liveness_exec_failing_beyond_timeout(api: client.ApiClient, namespace: str, target: Target) -> None:
    probe = probes.exec_probe(["/bin/sh", "-c", "sleep 10 & exit 1"], initialDelaySeconds=15,
                              timeoutSeconds=1, failureThreshold=1)
    probes.run_liveness_test(api, namespace, busybox_pod(target, "sleep 600", livenessProbe=probe),
                             restarts=1)


@probing.it("should be restarted with a local redirect http liveness probe", NodeConformance,
            twin="[sig-node] Probing container should be restarted with a local redirect http liveness probe "
                 "[NodeConformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["agnhost"])
def test_liveness_http_local_redirect(api: client.ApiClient, namespace: str, target: Target) -> None:
    path = "/redirect?loc=" + urllib.parse.quote_plus("/healthz")
    probe = probes.http_probe(path, 8080, initialDelaySeconds=15, failureThreshold=1)
    probes.run_liveness_test(api, namespace, liveness_pod(target, probe), restarts=1)


@probing.it("should *not* be restarted with a GRPC liveness probe", NodeConformance, Conformance,
            twin="[sig-node] Probing container should *not* be restarted with a GRPC liveness probe "
                 "[NodeConformance] [Conformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["agnhost"])
def test_liveness_grpc_no_restart(api: client.ApiClient, namespace: str, target: Target) -> None:
    probe = probes.grpc_probe(5000, initialDelaySeconds=probes.PROBE_INITIAL_DELAY, timeoutSeconds=5,
                              failureThreshold=1)
    probes.run_liveness_test(api, namespace, grpc_pod(target, probe), restarts=0)


@probing.it("should be restarted with a GRPC liveness probe", NodeConformance, Conformance,
            twin="[sig-node] Probing container should be restarted with a GRPC liveness probe "
                 "[NodeConformance] [Conformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["agnhost"])
def test_liveness_grpc_restart(api: client.ApiClient, namespace: str, target: Target) -> None:
    # Nothing serves gRPC on 2333.
    probe = probes.grpc_probe(2333, initialDelaySeconds=probes.PROBE_INITIAL_DELAY * 4,
                              timeoutSeconds=5, failureThreshold=1)
    probes.run_liveness_test(api, namespace, grpc_pod(target, probe), restarts=1)


@probing.it("should override timeoutGracePeriodSeconds when LivenessProbe field is set", NodeConformance,
            twin="[sig-node] Probing container should override timeoutGracePeriodSeconds when LivenessProbe "
                 "field is set [NodeConformance]",
            needs=[Capability.RUNS_CONTAINERS], images=["busybox"])
def test_liveness_grace_period_override(api: client.ApiClient, namespace: str, target: Target) -> None:
    # Nothing serves /healthz in busybox: the probe fails and the container is killed with the probe's 5 s.
    probe = probes.http_probe("/healthz", 8080, initialDelaySeconds=10, failureThreshold=1,
                              terminationGracePeriodSeconds=5)
    pod = busybox_pod(target, "sleep 1000", livenessProbe=probe)
    pod["spec"]["terminationGracePeriodSeconds"] = 500
    probes.run_liveness_test(api, namespace, pod, restarts=1, timeout=probes.GRACE_OVERRIDE_TIMEOUT)
