"""Manifests the ported tests share: pods and containers as upstream writes them, placement, HostProcess pods."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from winsuite.authoring.targeting import WINDOWS_BUILD_LABEL
from winsuite.authoring.targeting import NodeOS
from winsuite.authoring.targeting import Placement
from winsuite.authoring.targeting import place_pod

Manifest = dict[str, Any]

# The Windows user upstream runs "non-root" containers as (test/e2e/framework/pod/utils.go).
WINDOWS_NON_ROOT_USER = "ContainerUser"
LINUX_NON_ROOT_UID = 1000
NT_AUTHORITY_SYSTEM = "NT AUTHORITY\\SYSTEM"
NT_AUTHORITY_LOCAL_SERVICE = "NT AUTHORITY\\Local Service"
# Where a HostProcess container finds its image: C:\hpc from containerd 1.7, a per-container directory before.
SANDBOX_MOUNT = "%CONTAINER_SANDBOX_MOUNT_POINT%"
# Upstream's Linux pods tolerate every NoSchedule taint so that they may use control-plane nodes; winsuite
# tolerates the control-plane taint only, so that they never land on simulated nodes, which run nothing.
CONTROL_PLANE_TOLERATION = {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
                            "effect": "NoSchedule"}


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


def network_test_pod(image: str, os_name: str, *args: str) -> Manifest:
    """createTestPod (hybrid_network.go): one container named '<os>-container' with port 80, not yet placed."""
    made = container(f"{os_name}-container", image, ports=[{"containerPort": 80}])
    if args:
        made["args"] = list(args)
    return pod(f"pod-{uuid.uuid4()}", [made])


# -- security and placement ---------------------------------------------------------------------------
def restricted(manifest: Manifest, target_os: str) -> Manifest:
    """MustMixinRestrictedPodSecurity for the target OS.

    Upstream sets seccomp, capabilities and allowPrivilegeEscalation on every OS because its pods carry no
    spec.os; ours do, and the API server rejects those Linux-only fields on Windows pods (seed 002), so a
    Windows pod gets the Windows half only: runAsNonRoot as ContainerUser.
    """
    made = copy.deepcopy(manifest)
    security = made["spec"].setdefault("securityContext", {})
    security.setdefault("runAsNonRoot", True)
    if target_os == NodeOS.WINDOWS:
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
    if target_os == NodeOS.WINDOWS:
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


def on_linux(manifest: Manifest, simulated_nodes: Iterable[str]) -> Manifest:
    """The Linux side of a hybrid test (upstream's createTestPod with os=linux), whatever the run's target; kept off
    the simulated nodes (`target.placement.simulated_nodes`), which run nothing, tainted or not."""
    placed = place_pod(manifest, Placement(target_os="linux", windows_taint=None).avoiding(simulated_nodes))
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
