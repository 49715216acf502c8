"""Windows nodes and pods of the [sig-windows] tests: real Windows nodes, HostProcess pods, probes."""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from winsuite.authoring.targeting import OS_LABEL
from winsuite.authoring.targeting import WINDOWS_BUILD_LABEL
from winsuite.authoring.targeting import Placement
from winsuite.authoring.targeting import place_pod
from winsuite.k8s import containers
from winsuite.k8s import events
from winsuite.k8s import kubelet
from winsuite.k8s import nodes
from winsuite.k8s import pods
from winsuite.k8s import retry

Manifest = dict[str, Any]
log = logging.getLogger("winsuite.k8s")

NT_AUTHORITY_SYSTEM = "NT AUTHORITY\\SYSTEM"
NT_AUTHORITY_LOCAL_SERVICE = "NT AUTHORITY\\Local Service"
# Upstream's Linux pods tolerate every NoSchedule taint so that they may use control-plane nodes; winsuite
# tolerates the control-plane taint only, so that they never land on simulated nodes, which run nothing.
CONTROL_PLANE_TOLERATION = {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
                            "effect": "NoSchedule"}
PRIVILEGED_LABELS = {f"pod-security.kubernetes.io/{m}": "privileged" for m in ("enforce", "audit", "warn")}
FINISH_TIMEOUT = 180.0  # the 3 minutes upstream gives HostProcess pods to finish


# -- skips --------------------------------------------------------------------------------------------
def skip_unless_target_os_is_windows(target_os: str) -> None:
    """skipUnlessWindows: every [sig-windows] test runs only when the run targets Windows nodes."""
    if target_os != "windows":
        pytest.skip("requires the target OS windows, as every [sig-windows] test does "
                    f"(found: --node-os {target_os})")


def containerd_version(node: client.V1Node) -> tuple[int, int, int] | None:
    """getNodeContainerRuntimeAndVersion: (major, minor, patch) of containerd, None for other runtimes."""
    info = (node.status or client.V1NodeStatus()).node_info
    runtime = info.container_runtime_version if info else ""
    match = re.fullmatch(r"containerd://v?(\d+)\.(\d+)\.(\d+).*", runtime or "", flags=re.IGNORECASE)
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def runtime_of(node: client.V1Node) -> str:
    info = (node.status or client.V1NodeStatus()).node_info
    return str(info.container_runtime_version) if info else "unknown"


def skip_unless_containerd_at_least(node: client.V1Node, minimum: tuple[int, int]) -> None:
    """skipUnlessContainerdOneSevenOrGreater, for any minimum version."""
    version = containerd_version(node)
    if version is None or version[:2] < minimum:
        wanted = ".".join(map(str, minimum))
        pytest.skip(f"requires containerd >= {wanted} on Windows node {name_of(node)} "
                    f"(found: {runtime_of(node)})")


def skip_unless_graceful_node_shutdown(api: client.ApiClient, node: str) -> None:
    """The kubelet of the node must shut pods down gracefully (shutdownGracePeriod > 0 in its /configz)."""
    configured = kubelet.configz(api, node).get("shutdownGracePeriod")
    if not kubelet.duration_seconds(configured):
        pytest.skip(f"requires graceful node shutdown (kubelet shutdownGracePeriod) on {node} "
                    f"(found: {configured or 'unset'})")


# -- nodes --------------------------------------------------------------------------------------------
def name_of(obj: Any) -> str:
    return str(obj.metadata.name)


def labels_of(obj: Any) -> dict[str, str]:
    return dict(obj.metadata.labels or {})


def is_schedulable(node: client.V1Node) -> bool:
    """e2enode.IsNodeReady and IsNodeSchedulable."""
    return nodes.is_ready(node) and not (node.spec and node.spec.unschedulable)


def windows_nodes(api: client.ApiClient, *, simulated: bool = False) -> list[client.V1Node]:
    """findWindowsNodes: Ready, schedulable Windows nodes that run containers (simulated ones too only when
    asked, for scheduling tests)."""
    listed = retry.call(client.CoreV1Api(api).list_node, label_selector=f"{OS_LABEL}=windows").items
    return [n for n in listed if is_schedulable(n) and (simulated or not nodes.is_simulated(n))]


def find_windows_node(api: client.ApiClient) -> client.V1Node:
    """findWindowsNode: the first Ready, schedulable Windows node that runs containers."""
    found = windows_nodes(api)
    if not found:
        pytest.skip("requires a Ready and schedulable Windows node that runs containers (found: none)")
    log.info("using Windows node %s", name_of(found[0]))
    return found[0]


def read_node(api: client.ApiClient, name: str) -> client.V1Node:
    return retry.call(client.CoreV1Api(api).read_node, name)


def boot_id(node: client.V1Node) -> str:
    info = (node.status or client.V1NodeStatus()).node_info
    return str(info.boot_id or "") if info else ""


# -- placement ----------------------------------------------------------------------------------------
def pin_to_node(manifest: Manifest, node_name: str) -> Manifest:
    """What upstream does with spec.nodeName, as required node affinity. A Windows-build selector the run's
    placement may have added is dropped: the node named is the one whose build counts."""
    pinned = containers.node_affinity(manifest, node_name)
    pinned["spec"].get("nodeSelector", {}).pop(WINDOWS_BUILD_LABEL, None)
    return pinned


def on_linux(manifest: Manifest) -> Manifest:
    """The Linux side of a hybrid test (upstream's createTestPod with os=linux), whatever the run's target."""
    placed = place_pod(manifest, Placement(target_os="linux", windows_taint=None))
    placed["spec"]["tolerations"] = [*placed["spec"].get("tolerations", []), CONTROL_PLANE_TOLERATION]
    return placed


def allow_privileged_pods(api: client.ApiClient, namespace: str) -> None:
    """f.NamespacePodSecurityLevel = LevelPrivileged: HostProcess and hostPath pods pass Pod Security."""
    retry.call(client.CoreV1Api(api).patch_namespace, namespace, {"metadata": {"labels": PRIVILEGED_LABELS}})


# -- pods ---------------------------------------------------------------------------------------------
def host_process_pod(name: str, container_list: list[Manifest], *, user: str = NT_AUTHORITY_SYSTEM,
                     **spec: Any) -> Manifest:
    """A HostProcess pod as upstream writes them: hostProcess and runAsUserName at pod level, hostNetwork,
    never restarted."""
    security = {"windowsOptions": {"hostProcess": True, "runAsUserName": user}}
    return containers.pod(name, container_list, securityContext=security, hostNetwork=True,
                          restartPolicy="Never", **spec)


def network_test_pod(image: str, os_name: str, *args: str) -> Manifest:
    """createTestPod (hybrid_network.go): one container named '<os>-container' with port 80, not yet placed."""
    made = containers.container(f"{os_name}-container", image, ports=[{"containerPort": 80}])
    if args:
        made["args"] = list(args)
    return containers.pod(f"pod-{uuid.uuid4()}", [made])


def pod_ip(pod: client.V1Pod) -> str:
    return str(pod.status.pod_ip if pod.status else "")


def create_all(api: client.ApiClient, namespace: str, manifests: list[Manifest], *,
               timeout: float = containers.POD_START_TIMEOUT) -> list[client.V1Pod]:
    """PodClient.CreateBatch: create every pod, then wait for each to be Running and Ready."""
    for manifest in manifests:
        pods.create(api, namespace, manifest)
    return [pods.wait_for_pod(api, namespace, m["metadata"]["name"], state="Ready", timeout=timeout)
            for m in manifests]


def wait_for_finish(api: client.ApiClient, namespace: str, name: str,
                    timeout: float = FINISH_TIMEOUT) -> client.V1Pod:
    """PodClient.WaitForFinish: Succeeded or Failed."""
    return pods.wait_for_pod(api, namespace, name, state="Completed", timeout=timeout)


def phase_of(pod: client.V1Pod) -> str:
    return str((pod.status or client.V1PodStatus()).phase)


def assert_succeeded(api: client.ApiClient, namespace: str, name: str,
                     timeout: float = FINISH_TIMEOUT) -> client.V1Pod:
    """Wait for the pod to finish; it must have Succeeded (else: its containers' output and its events)."""
    finished = wait_for_finish(api, namespace, name, timeout)
    if phase_of(finished) != "Succeeded":
        spec = finished.spec or client.V1PodSpec(containers=[])
        every = [c.name for c in (spec.init_containers or []) + spec.containers]
        output = "\n".join(f"--- {c}:\n{containers.read_logs(api, namespace, name, c)[1]}" for c in every)
        happened = "\n".join(events.describe(e) for e in events.list_events(api, namespace)
                             if e.involved_object.name == name)
        raise AssertionError(f"{pods.describe(finished)}: expected phase Succeeded\n"
                             f"container output:\n{output}\nevents:\n{happened}")
    return finished


def terminated_reasons(pod: client.V1Pod) -> dict[str, str]:
    """testutils.TerminatedContainers: container name -> reason of the terminated ones."""
    statuses = (pod.status or client.V1PodStatus()).container_statuses or []
    return {s.name: str(s.state.terminated.reason) for s in statuses if s.state and s.state.terminated}


# -- connectivity (hybrid_network.go) ------------------------------------------------------------------
WARM_UP = 30.0  # Eventually …
STEADY = 10.0  # … then Consistently
PROBE_TIMEOUT = 10
INTERNAL_MAX_TRIES = 3
EXTERNAL_MAX_TRIES = 10


def linux_check(address: str, port: int) -> list[str]:
    return ["/bin/sh", "-c", f"nc -vz {address} {port} -w {PROBE_TIMEOUT}"]


def windows_check(address: str) -> list[str]:
    return ["cmd", "/c", f"curl.exe -4 {address} --connect-timeout {PROBE_TIMEOUT} --fail"]


def assert_consistent_connectivity(api: client.ApiClient, namespace: str, pod: str, *, container: str,
                                   command: list[str], max_tries: int) -> None:
    """assertConsistentConnectivity: within 30 s the probe succeeds (up to `max_tries` execs per check), and
    then keeps succeeding for 10 s."""

    def check() -> tuple[bool, str]:
        detail = ""
        for _ in range(max_tries):
            result = pods.exec_(api, namespace, pod, command, container=container, timeout=PROBE_TIMEOUT + 20)
            detail = f"{command} in {pod}/{container}: exit {result.exit_code}, stdout={result.stdout!r}, " \
                     f"stderr={result.stderr!r}"
            if result.exit_code == 0:
                return True, detail
        return False, detail

    containers.poll(check, what=f"{command} to succeed in {pod}/{container}", timeout=WARM_UP)
    deadline = time.monotonic() + STEADY
    while time.monotonic() < deadline:
        ok, detail = check()
        assert ok, f"connectivity did not hold for {STEADY:.0f}s: {detail}"
        time.sleep(containers.POLL_INTERVAL)


# -- cleanup ------------------------------------------------------------------------------------------
class Undo:
    """Undo steps for what a test creates outside its namespace (cluster-scoped objects, kube-system), run
    last-first after the test; an object already gone is fine, any other error is raised once all ran."""

    def __init__(self) -> None:
        self._steps: list[tuple[str, Callable[[], object]]] = []

    def add(self, what: str, step: Callable[[], object]) -> None:
        self._steps.append((what, step))

    def run(self) -> None:
        failures = []
        for what, step in reversed(self._steps):
            try:
                step()
            except ApiException as err:
                if err.status != 404:
                    failures.append(f"{what}: {err.status} {err.reason}")
            except Exception as err:  # every step gets its chance; the failures are reported together
                failures.append(f"{what}: {err}")
        self._steps.clear()
        if failures:
            raise AssertionError(f"failed to clean up: {'; '.join(failures)}")

