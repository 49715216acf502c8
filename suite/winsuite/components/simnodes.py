"""Simulated nodes: the Node objects kwok keeps Ready, and kwok's own flags."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from winsuite.errors import UsageError

FAKE_ANNOTATION = "kwok.x-k8s.io/node"
# kwok reports any pod bound to a simulated node Running without running anything: the taint keeps every
# pod off them except those of tests about scheduling and admission, which tolerate it on purpose.
FAKE_TAINT = {"key": FAKE_ANNOTATION, "value": "fake", "effect": "NoSchedule"}
WINDOWS_TAINT = {"key": "os", "value": "windows", "effect": "NoSchedule"}
WINDOWS_BUILD_LABEL = "node.kubernetes.io/windows-build"
DEFAULT_WINDOWS_BUILDS = ("10.0.17763", "10.0.20348")
# Pod IPs kwok reports for pods on simulated nodes (nothing is configured with them).
SIMULATED_POD_CIDR = "10.0.0.0/16"
KWOK_ADDRESS = "127.0.0.1"  # kwok's own listener, and the node IP its nodes report

# build -> (node name prefix, osImage, kernelVersion as Windows nodes report them)
WINDOWS_RELEASES = {
    "10.0.17763": ("win2019", "Windows Server 2019 Datacenter", "10.0.17763.6054"),
    "10.0.20348": ("win2022", "Windows Server 2022 Datacenter", "10.0.20348.2582"),
    "10.0.26100": ("win2025", "Windows Server 2025 Datacenter", "10.0.26100.1742"),
}
STAGES = ("node/fast", "node/heartbeat-with-lease", "pod/fast")


@dataclasses.dataclass(frozen=True)
class ClusterConfig:
    """A made cluster's nodes: simulated ones per Windows build and Linux, and whether a real node joins; the defaults
    are the documented embedded cluster."""

    windows_builds: tuple[str, ...] = DEFAULT_WINDOWS_BUILDS
    linux_simulated: int = 1
    real_node: bool | None = None  # None: on where the machine allows it


def check_builds(builds: tuple[str, ...]) -> None:
    unknown = [build for build in builds if build not in WINDOWS_RELEASES]
    if unknown:
        raise UsageError(
            f"unknown Windows build(s) {', '.join(unknown)}; known: {', '.join(WINDOWS_RELEASES)}"
        )


def _node(
    name: str,
    os_name: str,
    *,
    labels: Mapping[str, str],
    taints: list[dict[str, str]],
    info: dict[str, str],
    kubelet: str,
) -> dict[str, Any]:
    resources = {"cpu": "4", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {FAKE_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"},
            "labels": {
                "kubernetes.io/os": os_name,
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                **labels,
            },
        },
        "spec": {"taints": [*taints, FAKE_TAINT]},
        # kwok's node-initialize stage keeps what is set here and fills in conditions and addresses.
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "nodeInfo": {
                "operatingSystem": os_name,
                "architecture": "amd64",
                "kubeletVersion": kubelet,
                "kubeProxyVersion": "",  # deprecated; kubelets >= 1.31 leave it empty
                # What a kubelet reads from the machine; a simulated node gets stable made-up values.
                "machineID": uuid.uuid5(uuid.NAMESPACE_DNS, name).hex,
                "systemUUID": str(uuid.uuid5(uuid.NAMESPACE_DNS, name)),
                "bootID": "",
                **info,
            },
        },
    }


def manifests(config: ClusterConfig, kubelet_version: str) -> list[dict[str, Any]]:
    """The simulated nodes of a cluster: Windows ones per configured build, then the Linux ones."""
    check_builds(config.windows_builds)
    nodes = []
    seen: dict[str, int] = {}
    for build in config.windows_builds:
        prefix, os_image, kernel = WINDOWS_RELEASES[build]
        index = seen[prefix] = seen.get(prefix, -1) + 1
        info = {
            "osImage": os_image,
            "kernelVersion": kernel,
            "containerRuntimeVersion": "containerd://1.7.20",
        }
        labels = {WINDOWS_BUILD_LABEL: build}
        node = _node(
            f"{prefix}-{index}",
            "windows",
            labels=labels,
            taints=[WINDOWS_TAINT],
            info=info,
            kubelet=kubelet_version,
        )
        nodes.append(node)
    linux_info = {
        "osImage": "Debian GNU/Linux 12 (bookworm)",
        "kernelVersion": "6.1.0",
        "containerRuntimeVersion": "containerd://1.6.20",
    }
    for index in range(config.linux_simulated):
        nodes.append(
            _node(
                f"linux-sim-{index}", "linux", labels={}, taints=[], info=linux_info, kubelet=kubelet_version
            )
        )
    return nodes


def kwok_argv(kwok: Path, stages: Path, kubeconfig: Path, serving: tuple[Path, Path], port: int) -> list[str]:
    """kwok's command line; `serving` is the certificate and key of its (unused, loopback) kubelet endpoint."""
    return [
        str(kwok),
        f"--kubeconfig={kubeconfig}",
        "--manage-all-nodes=false",
        f"--manage-nodes-with-annotation-selector={FAKE_ANNOTATION}=fake",
        f"--cidr={SIMULATED_POD_CIDR}",
        f"--node-ip={KWOK_ADDRESS}",
        "--node-name=localhost",
        f"--node-port={port}",
        f"--server-address={KWOK_ADDRESS}:{port}",
        f"--tls-cert-file={serving[0]}",
        f"--tls-private-key-file={serving[1]}",
        "--node-lease-duration-seconds=40",
        *(f"--config={stages / stage}" for stage in STAGES),
    ]
