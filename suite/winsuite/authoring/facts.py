"""What a run knows of its cluster, as plain data: nodes (real or simulated) and capabilities per target OS."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import semver

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.capabilities import requirement_text
from winsuite.authoring.environment import environment_metadata
from winsuite.versions import is_containerd_1_7_or_later
from winsuite.versions import runtime_and_version

HYPERV_RUNTIME_CLASS = "runhcs-wcow-hypervisor"
GMSA_NODE_LABEL = ("agentpool", "windowsgmsa")  # what upstream gmsa_full.go looks for
GPU_RESOURCE = "microsoft.com/directx"
# Capabilities that need a node of the target OS which really runs containers.
NEEDS_REAL_NODE = frozenset({
    Capability.RUNS_CONTAINERS, Capability.EXEC, Capability.LOGS, Capability.PORT_FORWARD,
    Capability.SERVICES, Capability.NODE_PORTS, Capability.STATS_SUMMARY, Capability.KUBELET_CONFIGZ,
})


@dataclasses.dataclass(frozen=True)
class NodeFacts:
    name: str
    os: str
    windows_build: str | None
    kubelet_version: str
    container_runtime: str
    os_image: str
    kernel_version: str
    simulated: bool
    ready: bool
    unschedulable: bool
    taints: list[str]
    labels: dict[str, str]
    allocatable: dict[str, str]
    capacity: dict[str, str]
    internal_ip: str | None
    provider_id: str | None

    @property
    def runs_containers(self) -> bool:
        return self.ready and not self.simulated and not self.unschedulable

    def runtime_and_version(self) -> tuple[str, semver.Version]:
        """("containerd", 1.7.13) of the runtime the node reports. Raises ValueError when it is unreadable."""
        return runtime_and_version(self.container_runtime)


@dataclasses.dataclass(frozen=True)
class ClusterFacts:
    server: str
    server_version: str
    nodes: list[NodeFacts]
    cluster_dns: bool
    metrics_api: bool
    runtime_classes: list[str]
    egress_allowed: bool
    warnings: list[str]
    kubectl: str = ""  # the kubectl the tests run against this cluster ("" when there is none)
    load_balancer: str = ""  # what showed LoadBalancer Services get addresses ("" when nothing did)
    no_load_balancer: str = "not observed"  # why not, when nothing did
    cluster_uid: str = ""  # kube-system's UID: tells two clusters behind one address apart ("" when not readable)

    # -- capabilities ----------------------------------------------------------------------------
    def _nodes(self, os_name: str) -> list[NodeFacts]:
        return [n for n in self.nodes if n.os == os_name]

    def _found(self, os_name: str) -> str:
        nodes = self._nodes(os_name)
        if not nodes:
            return f"no {os_name.capitalize()} nodes"
        simulated = sum(n.simulated for n in nodes)
        real = len(nodes) - simulated
        parts = []
        if simulated:
            parts.append(f"{simulated} simulated {os_name.capitalize()} node{'s' * (simulated != 1)}")
        if real:
            not_ready = sum(not n.ready or n.unschedulable for n in nodes if not n.simulated)
            state = f", {not_ready} not Ready or cordoned" if not_ready else ""
            parts.append(f"{real} real {os_name.capitalize()} node{'s' * (real != 1)}{state}")
        return ", ".join(parts)

    def missing(self, capability: Capability, target_os: str) -> str | None:
        """None when the cluster has the capability for the target OS, else what was found instead."""
        windows = self._nodes("windows")
        real_windows = [n for n in windows if n.runs_containers]
        if capability in NEEDS_REAL_NODE:
            ok = any(n.runs_containers for n in self._nodes(target_os))
            return None if ok else self._found(target_os)
        checks: dict[Capability, tuple[bool, str]] = {
            Capability.NODES: (any(n.ready for n in self._nodes(target_os)), self._found(target_os)),
            Capability.WINDOWS_NODES: (any(n.ready for n in windows), self._found("windows")),
            Capability.WINDOWS_KERNEL: (bool(real_windows), self._found("windows")),
            Capability.LINUX_AND_WINDOWS_CONTAINERS: (
                bool(real_windows) and any(n.runs_containers for n in self._nodes("linux")),
                f"{self._found('linux')}; {self._found('windows')}"),
            Capability.CLUSTER_DNS: (self.cluster_dns, "no kube-system/kube-dns Service with ready endpoints"),
            Capability.MIXED_WINDOWS_BUILDS: (
                len({n.windows_build for n in windows if n.ready and n.windows_build}) >= 2,
                f"Windows builds {sorted({n.windows_build or '?' for n in windows}) or 'none'}"),
            Capability.HOSTPROCESS: (
                any(is_containerd_1_7_or_later(n.container_runtime) for n in real_windows),
                self._found("windows")),
            Capability.HYPERV: (
                bool(real_windows) and HYPERV_RUNTIME_CLASS in self.runtime_classes,
                f"RuntimeClasses {self.runtime_classes or 'none'}; {self._found('windows')}"),
            Capability.ACTIVE_DIRECTORY: (
                any(n.labels.get(GMSA_NODE_LABEL[0]) == GMSA_NODE_LABEL[1] for n in real_windows),
                f"no real Windows node labelled {'='.join(GMSA_NODE_LABEL)}"),
            Capability.GPU: (any(GPU_RESOURCE in n.allocatable for n in real_windows),
                             f"no Windows node with allocatable {GPU_RESOURCE}"),
            Capability.LOAD_BALANCER: (bool(self.load_balancer), self.no_load_balancer),
            Capability.METRICS_API: (self.metrics_api, "no available v1beta1.metrics.k8s.io APIService"),
            Capability.EXTERNAL_NETWORK: (self.egress_allowed, "a cluster whose pods may not reach the Internet"),
        }
        ok, found = checks[capability]
        return None if ok else found

    def skip_reason(self, needs: tuple[Capability, ...], target_os: str) -> str | None:
        for capability in needs:
            found = self.missing(capability, target_os)
            if found is not None:
                return requirement_text(capability, target_os, found)
        return None

    # -- derived facts -----------------------------------------------------------------------------
    def windows_builds(self) -> list[str]:
        return sorted({n.windows_build for n in self.nodes if n.windows_build})

    def simulated_nodes(self) -> list[str]:
        """The simulated nodes' names (kwok's annotation, tainted or not): pods that must run are kept off them."""
        return [n.name for n in self.nodes if n.simulated]

    def metadata(self, target_os: str, runtime_class: str | None = None) -> dict[str, Any]:
        """finished.json metadata: TestGrid column headers read the flat keys."""
        return {
            "kubernetes-version": self.server_version,
            **environment_metadata(self.nodes, runtime_class, target_os),
            "node-os": target_os,
            "discovery": dataclasses.asdict(self),
        }

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2)

    @staticmethod
    def from_json(text: str) -> ClusterFacts:
        raw = json.loads(text)
        raw["nodes"] = [NodeFacts(**n) for n in raw["nodes"]]
        return ClusterFacts(**raw)

    @staticmethod
    def load(path: Path) -> ClusterFacts:
        return ClusterFacts.from_json(path.read_text())
