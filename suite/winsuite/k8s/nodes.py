"""Nodes: what a node is (OS, Windows build, simulated or real, container runtime), and which are usable for a
target OS; the skips that depend on the nodes."""

from __future__ import annotations

import logging

import pytest
import semver
from kubernetes import client

from winsuite import versions
from winsuite.authoring.targeting import OS_LABEL
from winsuite.authoring.targeting import SIMULATED_NODE_ANNOTATION
from winsuite.authoring.targeting import WINDOWS_BUILD_LABEL
from winsuite.authoring.targeting import NodeOS
from winsuite.k8s import retry
from winsuite.k8s.objects import name_of

log = logging.getLogger("winsuite.k8s")
KWOK_RUNTIME_PREFIX = "kwok-"  # the containerRuntimeVersion kwok reports for a node that names none


def list_nodes(api: client.ApiClient) -> list[client.V1Node]:
    return list(retry.call(client.CoreV1Api(api).list_node).items)


def os_of(node: client.V1Node) -> str:
    labels = node.metadata.labels or {}
    return str(labels.get(OS_LABEL) or node.status.node_info.operating_system or "")


def windows_build(node: client.V1Node) -> str | None:
    return (node.metadata.labels or {}).get(WINDOWS_BUILD_LABEL)


def is_simulated(node: client.V1Node) -> bool:
    """kwok nodes report pods Running without running anything. A node carries kwok's annotation, or (kwok run with
    --manage-all-nodes, as kwokctl runs it, takes nodes without it too) reports kwok as its runtime: no kubelet does."""
    if SIMULATED_NODE_ANNOTATION in (node.metadata.annotations or {}):
        return True
    info = node.status.node_info if node.status is not None else None
    return bool(info is not None and (info.container_runtime_version or "").startswith(KWOK_RUNTIME_PREFIX))


def is_ready(node: client.V1Node) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])


def internal_ip(node: client.V1Node) -> str | None:
    return next((a.address for a in node.status.addresses or [] if a.type == "InternalIP"), None)


def is_schedulable(node: client.V1Node) -> bool:
    """e2enode.IsNodeReady and IsNodeSchedulable."""
    return is_ready(node) and not (node.spec and node.spec.unschedulable)


def windows_nodes(api: client.ApiClient, *, simulated: bool = False) -> list[client.V1Node]:
    """findWindowsNodes: Ready, schedulable Windows nodes that run containers (simulated ones too only when
    asked, for scheduling tests)."""
    listed = retry.call(client.CoreV1Api(api).list_node, label_selector=f"{OS_LABEL}=windows").items
    return [n for n in listed if is_schedulable(n) and (simulated or not is_simulated(n))]


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


# -- the container runtime ----------------------------------------------------------------------------
def runtime_of(node: client.V1Node) -> str:
    info = (node.status or client.V1NodeStatus()).node_info
    return str(info.container_runtime_version) if info else "unknown"


def container_runtime(node: client.V1Node) -> tuple[str, semver.Version]:
    """getNodeContainerRuntimeAndVersion: ("containerd", 1.7.13) from "containerd://1.7.13". Raises ValueError
    when the node reports something else."""
    return versions.runtime_and_version(runtime_of(node))


def _containerd_version(node: client.V1Node) -> semver.Version:
    """The node's containerd version; skips when the runtime is another or its version cannot be read."""
    try:
        name, version = container_runtime(node)
    except ValueError as err:
        pytest.skip(f"requires containerd on Windows node {name_of(node)} (found: {err})")
    if name.lower() != "containerd":
        pytest.skip(f"requires containerd on Windows node {name_of(node)} (found: {runtime_of(node)})")
    return version


def skip_unless_containerd_1_7_or_later(node: client.V1Node) -> None:
    """skipUnlessContainerdOneSevenOrGreater (1.7.0-alpha.1 and later)."""
    if _containerd_version(node) < versions.CONTAINERD_1_7:
        pytest.skip(f"requires containerd >= 1.7 on Windows node {name_of(node)} (found: {runtime_of(node)})")


def skip_unless_containerd_before_1_7(node: client.V1Node) -> None:
    """host_process.go's command-path check: only containerd < 1.7.0 starts HostProcess commands that way."""
    if _containerd_version(node) >= semver.Version(1, 7, 0):
        pytest.skip(f"requires containerd 1.6 on Windows node {name_of(node)} (found: {runtime_of(node)})")


def skip_unless_target_os_is_windows(target_os: str) -> None:
    """skipUnlessWindows: every [sig-windows] test runs only when the run targets Windows nodes."""
    if target_os != NodeOS.WINDOWS:
        pytest.skip("requires the target OS windows, as every [sig-windows] test does "
                    f"(found: --node-os {target_os})")
