"""Probes as container_probe.go writes them: probe pods, probe fields, and RunLivenessTest."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from winsuite.k8s import pods
from winsuite.k8s import waits
from winsuite.k8s.container_status import has_started
from winsuite.k8s.container_status import restart_count
from winsuite.k8s.manifests import Manifest
from winsuite.k8s.manifests import container
from winsuite.k8s.manifests import pod
from winsuite.k8s.waits import PermanentFailure

# Upstream's timeouts (container_probe.go), trimmed to fit the suite's per-test timeout where upstream allows
# more than it.
OBSERVATION_TIMEOUT = 240.0  # defaultObservationTimeout
PROBE_INITIAL_DELAY = 15  # probeTestInitialDelaySeconds
# A shorter probe-level grace period must win over a 500 s pod one: upstream allows 40 s + the observation.
GRACE_OVERRIDE_TIMEOUT = 40 + OBSERVATION_TIMEOUT


def busybox_probe_pod(image: str, name: str, command: list[str], **probes: Any) -> Manifest:
    """busyBoxPodSpec / startupPodSpec of container_probe.go: busybox running `command`, with probes
    given by their field names (livenessProbe=…, readinessProbe=…, startupProbe=…)."""
    busybox = container("busybox", image, command=command, **probes)
    return pod(name, [busybox], labels={"test": name})


def webserver_probe_pod(image: str, **probes: Any) -> Manifest:
    """testWebServerPodSpec: agnhost test-webserver on port 80, with probes by their field names."""
    webserver = container("test-webserver", image, args=["test-webserver"], ports=[{"containerPort": 80}],
                          **probes)
    return pod("test-webserver", [webserver])


def exec_probe(command: list[str], **fields: Any) -> Manifest:
    return {"exec": {"command": command}, **fields}


def http_probe(path: str, port: int, **fields: Any) -> Manifest:
    return {"httpGet": {"path": path, "port": port}, **fields}


def tcp_probe(port: int, **fields: Any) -> Manifest:
    return {"tcpSocket": {"port": port}, **fields}


def grpc_probe(port: int, **fields: Any) -> Manifest:
    return {"grpc": {"port": port}, **fields}


def run_liveness_test(api: client.ApiClient, namespace: str, manifest: Manifest, *, restarts: int,
                      timeout: float = OBSERVATION_TIMEOUT) -> client.V1Pod:
    """RunLivenessTest: the first container restarts exactly `restarts` times (0: not once in `timeout`),
    and its restart count never goes down."""
    name, target = manifest["metadata"]["name"], manifest["spec"]["containers"][0]["name"]
    pods.create(api, namespace, manifest)
    try:
        started = pods.wait_until(api, namespace, name, f"container {target} to start",
                                  lambda p: has_started(p, target), timeout=timeout)
        initial = restart_count(started, target)
        last = [initial]

        def restarts_so_far(current: client.V1Pod) -> int:
            count = restart_count(current, target)
            if count < last[0]:
                raise PermanentFailure(f"restart count of {name} went from {last[0]} down to {count}")
            last[0] = count
            return count - initial

        if restarts == 0:
            def never_restarted(items: list[client.V1Pod]) -> None:
                assert restarts_so_far(items[0]) == 0, f"pod {namespace}/{name} restarted: {pods.describe(items[0])}"

            return waits.hold(pods.core(api).list_namespaced_pod, namespace=namespace, name=name,
                              what=f"pod {namespace}/{name} not to restart", duration=timeout, check=never_restarted,
                              describe=pods.describe_all)[0]
        # Upstream gives each earlier restart 10 s of back-off on top of the timeout.
        return pods.wait_until(api, namespace, name, f"container {target} to restart {restarts} time(s)",
                               lambda p: restarts_so_far(p) >= restarts, timeout=timeout + 10 * initial)
    finally:
        pods.delete(api, namespace, name, grace_seconds=0)
