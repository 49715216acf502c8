"""Containers: manifests the ported tests share, and what containers do (output, restarts, probes)."""

from __future__ import annotations

import copy
import datetime
import logging
import re
import stat
import uuid
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from winsuite.authoring.targeting import WINDOWS_BUILD_LABEL
from winsuite.authoring.targeting import Placement
from winsuite.authoring.targeting import place_pod
from winsuite.k8s import events
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import waits
from winsuite.k8s.waits import PermanentFailure
from winsuite.k8s.waits import wait_for_set

Manifest = dict[str, Any]
log = logging.getLogger("winsuite.k8s")

# Upstream framework timeouts (test/e2e/framework/timeouts.go, container_probe.go), trimmed to fit the
# suite's per-test timeout where upstream allows more than it.
POD_START_TIMEOUT = 180.0
OBSERVATION_TIMEOUT = 240.0  # defaultObservationTimeout of container_probe.go
PROBE_INITIAL_DELAY = 15  # probeTestInitialDelaySeconds
# A shorter probe-level grace period must win over a 500 s pod one: upstream allows 40 s + the observation.
GRACE_OVERRIDE_TIMEOUT = 40 + OBSERVATION_TIMEOUT
FINISH_TIMEOUT = 180.0  # the 3 minutes upstream gives HostProcess pods to finish
# The Windows user upstream runs "non-root" containers as (test/e2e/framework/pod/utils.go).
WINDOWS_NON_ROOT_USER = "ContainerUser"
NT_AUTHORITY_SYSTEM = "NT AUTHORITY\\SYSTEM"
NT_AUTHORITY_LOCAL_SERVICE = "NT AUTHORITY\\Local Service"
# Where a HostProcess container finds its image: C:\hpc from containerd 1.7, a per-container directory before.
SANDBOX_MOUNT = "%CONTAINER_SANDBOX_MOUNT_POINT%"
# Upstream's Linux pods tolerate every NoSchedule taint so that they may use control-plane nodes; winsuite
# tolerates the control-plane taint only, so that they never land on simulated nodes, which run nothing.
CONTROL_PLANE_TOLERATION = {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
                            "effect": "NoSchedule"}
LINUX_NON_ROOT_UID = 1000


# -- manifests ----------------------------------------------------------------------------------------
def pod(name: str, containers: list[Manifest], *, labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None, **spec: Any) -> Manifest:
    """A Pod manifest; `spec` takes PodSpec fields by their API names (restartPolicy=…, volumes=…)."""
    metadata: Manifest = {"name": name}
    if labels:
        metadata["labels"] = dict(labels)
    if annotations:
        metadata["annotations"] = dict(annotations)
    spec = {"containers": containers, **spec}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def container(name: str, image: str, *, command: list[str] | None = None, args: list[str] | None = None,
              **fields: Any) -> Manifest:
    """A Container manifest; `fields` take Container fields by their API names (env=…, volumeMounts=…)."""
    made: Manifest = {"name": name, "image": image}
    if command is not None:
        made["command"] = command
    if args is not None:
        made["args"] = args
    return {**made, **fields}


def agnhost_container(image: str, name: str = "agnhost-container", *args: str, **fields: Any) -> Manifest:
    """NewAgnhostContainer: agnhost running `args` (default: pause)."""
    return container(name, image, args=list(args) or ["pause"], **fields)


def agnhost_pod(image: str, name: str, *args: str, volumes: list[Manifest] | None = None,
                mounts: list[Manifest] | None = None, **spec: Any) -> Manifest:
    """NewAgnhostPod: one agnhost container, deleted immediately."""
    fields = {"volumeMounts": mounts} if mounts else {}
    agnhost = agnhost_container(image, "agnhost-container", *args, **fields)
    if volumes:
        spec["volumes"] = volumes
    return pod(name, [agnhost], **{"terminationGracePeriodSeconds": 0, **spec})


def volume_mount(name: str, path: str, *, read_only: bool = False) -> Manifest:
    return {"name": name, "mountPath": path, "readOnly": read_only}


def env_from_field(name: str, field_path: str) -> Manifest:
    return {"name": name, "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": field_path}}}


def env_from_resource(name: str, resource: str) -> Manifest:
    return {"name": name, "valueFrom": {"resourceFieldRef": {"resource": resource}}}


def resources(requests: Mapping[str, str], limits: Mapping[str, str]) -> Manifest:
    return {"requests": dict(requests), "limits": dict(limits)}


def restricted(manifest: Manifest, target_os: str) -> Manifest:
    """MustMixinRestrictedPodSecurity for the target OS.

    Upstream sets seccomp, capabilities and allowPrivilegeEscalation on every OS because its pods carry no
    spec.os; ours do, and the API server rejects those Linux-only fields on Windows pods (seed 002), so a
    Windows pod gets the Windows half only: runAsNonRoot as ContainerUser.
    """
    made = copy.deepcopy(manifest)
    security = made["spec"].setdefault("securityContext", {})
    security.setdefault("runAsNonRoot", True)
    if target_os == "windows":
        security.setdefault("windowsOptions", {"runAsUserName": WINDOWS_NON_ROOT_USER})
        return made
    security.setdefault("runAsUser", LINUX_NON_ROOT_UID)
    security.setdefault("seccompProfile", {"type": "RuntimeDefault"})
    for each in made["spec"]["containers"]:
        context = each.setdefault("securityContext", {})
        context.setdefault("allowPrivilegeEscalation", False)
        context.setdefault("capabilities", {"drop": ["ALL"]})
    return made


def run_as_non_root(manifest: Manifest, target_os: str) -> Manifest:
    """setPodNonRootUser: ContainerUser on Windows, uid 1000 on Linux."""
    made = copy.deepcopy(manifest)
    security = made["spec"].setdefault("securityContext", {})
    if target_os == "windows":
        security["windowsOptions"] = {"runAsUserName": WINDOWS_NON_ROOT_USER}
    else:
        security["runAsUser"] = LINUX_NON_ROOT_UID
    return made


def node_affinity(manifest: Manifest, node_name: str) -> Manifest:
    """e2epod.SetAffinity: require the node by its name (a scheduling constraint, never spec.nodeName)."""
    made = copy.deepcopy(manifest)
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    made["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [term]}}}
    return made


def pin_to_node(manifest: Manifest, node_name: str) -> Manifest:
    """What upstream does with spec.nodeName, as required node affinity. A Windows-build selector the run's
    placement may have added is dropped: the node named is the one whose build counts."""
    pinned = node_affinity(manifest, node_name)
    pinned["spec"].get("nodeSelector", {}).pop(WINDOWS_BUILD_LABEL, None)
    return pinned


def on_linux(manifest: Manifest) -> Manifest:
    """The Linux side of a hybrid test (upstream's createTestPod with os=linux), whatever the run's target."""
    placed = place_pod(manifest, Placement(target_os="linux", windows_taint=None))
    placed["spec"]["tolerations"] = [*placed["spec"].get("tolerations", []), CONTROL_PLANE_TOLERATION]
    return placed


# -- HostProcess pods ---------------------------------------------------------------------------------
def host_process_pod(name: str, container_list: list[Manifest], *, user: str = NT_AUTHORITY_SYSTEM,
                     **spec: Any) -> Manifest:
    """A HostProcess pod as upstream writes them: hostProcess and runAsUserName at pod level, hostNetwork,
    never restarted."""
    security = {"windowsOptions": {"hostProcess": True, "runAsUserName": user}}
    return pod(name, container_list, securityContext=security, hostNetwork=True, restartPolicy="Never", **spec)


def agnhost_on_host(*args: str) -> list[str]:
    """The command that runs agnhost in a HostProcess container. The image's `/agnhost` entrypoint does not
    resolve on the host (kubernetes#112651, #120071): like host_process.go's in-cluster-config test, copy it
    to agnhost.exe next to itself and run that."""
    binary = f"{SANDBOX_MOUNT}\\agnhost"
    return ["cmd", "/C", "copy", "/Y", binary, f"{binary}.exe", "&&", f"{binary}.exe", *args]


def network_test_pod(image: str, os_name: str, *args: str) -> Manifest:
    """createTestPod (hybrid_network.go): one container named '<os>-container' with port 80, not yet placed."""
    made = container(f"{os_name}-container", image, ports=[{"containerPort": 80}])
    if args:
        made["args"] = list(args)
    return pod(f"pod-{uuid.uuid4()}", [made])


def start(api: client.ApiClient, namespace: str, manifest: Manifest, *, state: str = "Running",
          timeout: float = POD_START_TIMEOUT) -> client.V1Pod:
    """podClient.CreateSync: create the pod and wait until it is `state` (Running, Ready, …)."""
    pods.create(api, namespace, manifest)
    return pods.wait_for_pod(api, namespace, manifest["metadata"]["name"], state=state, timeout=timeout)


def create_all(api: client.ApiClient, namespace: str, manifests: list[Manifest], *,
               timeout: float = POD_START_TIMEOUT) -> list[client.V1Pod]:
    """PodClient.CreateBatch: create every pod, then wait for each to be Running and Ready."""
    for manifest in manifests:
        pods.create(api, namespace, manifest)
    return [pods.wait_for_pod(api, namespace, m["metadata"]["name"], state="Ready", timeout=timeout)
            for m in manifests]


def wait_for_finish(api: client.ApiClient, namespace: str, name: str,
                    timeout: float = FINISH_TIMEOUT) -> client.V1Pod:
    """PodClient.WaitForFinish: Succeeded or Failed."""
    return pods.wait_for_pod(api, namespace, name, state="Completed", timeout=timeout)


def assert_succeeded(api: client.ApiClient, namespace: str, name: str,
                     timeout: float = FINISH_TIMEOUT) -> client.V1Pod:
    """Wait for the pod to finish; it must have Succeeded (else: its containers' output and its events)."""
    finished = wait_for_finish(api, namespace, name, timeout)
    if pods.phase_of(finished) != "Succeeded":
        spec = finished.spec or client.V1PodSpec(containers=[])
        every = [c.name for c in (spec.init_containers or []) + spec.containers]
        output = "\n".join(f"--- {c}:\n{read_logs(api, namespace, name, c)[1]}" for c in every)
        happened = "\n".join(events.describe(e) for e in events.list_events(api, namespace)
                             if e.involved_object.name == name)
        raise AssertionError(f"{pods.describe(finished)}: expected phase Succeeded\n"
                             f"container output:\n{output}\nevents:\n{happened}")
    return finished


def wait_for_no_pods(api: client.ApiClient, namespace: str, *, label_selector: str = "", what: str,
                     timeout: float = POD_START_TIMEOUT) -> None:
    """Wait until no pod of the namespace (matching the selector) is left."""
    wait_for_set(pods.core(api).list_namespaced_pod, namespace=namespace, label_selector=label_selector,
                 what=what, condition=lambda items: not items, timeout=timeout,
                 describe=pods.describe_all)


# -- probes -------------------------------------------------------------------------------------------
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


# -- container state ----------------------------------------------------------------------------------
def status_of(pod_: client.V1Pod, name: str) -> client.V1ContainerStatus | None:
    status = pod_.status or client.V1PodStatus()
    statuses = (status.init_container_statuses or []) + (status.container_statuses or [])
    return next((s for s in statuses if s.name == name), None)


def started_at(pod_: client.V1Pod, name: str) -> datetime.datetime:
    """GetContainerStartedTime: when the running container started."""
    running = getattr(getattr(status_of(pod_, name), "state", None), "running", None)
    assert running is not None, f"container {name} is not running: {pods.describe(pod_)}"
    started: datetime.datetime = running.started_at
    return started


def restart_count(pod_: client.V1Pod, name: str) -> int:
    status = status_of(pod_, name)
    return int(status.restart_count) if status else 0


def has_started(pod_: client.V1Pod, name: str) -> bool:
    """The container is no longer waiting: it runs or has terminated at least once."""
    state = getattr(status_of(pod_, name), "state", None)
    return state is not None and (state.running is not None or state.terminated is not None)


def has_terminated(pod_: client.V1Pod, name: str) -> bool:
    return getattr(getattr(status_of(pod_, name), "state", None), "terminated", None) is not None


def is_ready(pod_: client.V1Pod) -> bool:
    return pods.CONDITIONS["Ready"](pod_)


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


# -- output -------------------------------------------------------------------------------------------
def read_logs(api: client.ApiClient, namespace: str, name: str, container: str,
              **options: Any) -> tuple[bool, str]:
    """(True, logs), or (False, the API's answer) while the container has none to give yet."""
    try:
        read = pods.core(api).read_namespaced_pod_log
        return True, str(retry.call(read, name, namespace, container=container, **options))
    except ApiException as err:
        if err.status in (400, 404):  # container creating / pod not yet bound: logs come later
            return False, f"{err.status} {err.reason}: {err.body}"
        raise


def wait_for_logs(api: client.ApiClient, namespace: str, name: str, container: str, *, what: str,
                  matches: Callable[[str], bool], timeout: float = POD_START_TIMEOUT, **options: Any) -> str:
    """Poll the container's logs until `matches(logs)`; return them."""

    def check() -> str:
        ok, text = read_logs(api, namespace, name, container, **options)
        assert ok and matches(text), text
        return text

    return waits.poll(f"logs of {namespace}/{name}/{container} to show {what}", check, timeout=timeout)


def matcher(expected: str, *, regex: bool) -> Callable[[str], bool]:
    """gomega's ContainSubstring, or MatchRegexp for TestContainerOutputRegexp."""
    if regex:
        pattern = re.compile(expected)
        return lambda text: pattern.search(text) is not None
    return lambda text: expected in text


def file_mode_regex(path: str, mask: int | None = None) -> str:
    """getFileModeRegex: agnhost mounttest's --file_mode line, 0644 (Linux) or 0775 (Windows) by default."""
    linux, windows = (0o644, 0o775) if mask is None else (mask, mask)
    linux_line = f'mode of file "{path}": {stat.filemode(stat.S_IFREG | linux)}'
    windows_line = f'mode of Windows file "{path}": {stat.filemode(stat.S_IFREG | windows)}'
    return f"({re.escape(linux_line)}|{re.escape(windows_line)})"


def expect_output(api: client.ApiClient, namespace: str, manifest: Manifest,
                  expected: Mapping[str, Iterable[str]] | Iterable[str], *, regex: bool = False,
                  timeout: float = POD_START_TIMEOUT) -> dict[str, str]:
    """TestContainerOutput / MatchMultipleContainerOutputs: run the pod to success, then every expected
    string (or regex) is in its container's logs. A plain list is about the first container."""
    name = manifest["metadata"]["name"]
    if not isinstance(expected, Mapping):
        expected = {manifest["spec"]["containers"][0]["name"]: list(expected)}
    pods.create(api, namespace, manifest)
    try:
        pods.wait_for_pod(api, namespace, name, state="Succeeded", timeout=timeout)
    except AssertionError as err:
        spec = manifest["spec"]
        every = [c["name"] for c in spec.get("initContainers", []) + spec["containers"]]
        dump = "\n".join(f"--- {c}:\n{read_logs(api, namespace, name, c)[1]}" for c in every)
        raise AssertionError(f"expected pod {name} to succeed: {err}\ncontainer output:\n{dump}") from err
    outputs = {}
    for each, wanted in expected.items():
        text = pods.logs(api, namespace, name, container=each)
        missing = [w for w in wanted if not matcher(w, regex=regex)(text)]
        assert not missing, f"expected {missing} in the output of container {each}, got:\n{text}"
        outputs[each] = text
    return outputs
