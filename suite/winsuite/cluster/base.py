"""The protocol every cluster target implements and the registry of targets, one per cluster type.

Targets are imported only when chosen (the embedded one brings the kubernetes client, which `winsuite --help` does
not need).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from winsuite.inputs.cluster_spec import ClusterSpec
from winsuite.inputs.cluster_spec import ClusterType


class ClusterTarget(Protocol):
    """A cluster winsuite can run against. Creating one is idempotent and logs its lifecycle."""

    name: str
    # Whether the cluster's pods may reach the Internet (tests that need egress skip otherwise).
    allows_egress: bool

    def connect(self) -> None:
        """Create or start the cluster if this target manages it, otherwise check it is reachable."""

    def wait_ready(self, timeout: float) -> None:
        """Block until the API server answers and the nodes are Ready, or raise with the last state seen."""

    def kubeconfig_path(self) -> Path:
        """A kubeconfig file whose current context points at this cluster."""

    def collect_logs(self, dest: Path) -> None:
        """Copy component logs (for a managed cluster) into dest; called before teardown."""

    def close(self) -> None:
        """Stop what this target started (nothing for an external cluster)."""

    def describe(self) -> str:
        """One line: what this is and where it lives."""


def _embedded(spec: ClusterSpec) -> ClusterTarget:
    from winsuite.cluster.embedded import LocalCluster

    target: ClusterTarget = LocalCluster(name=spec.name, real_node=spec.real_node)
    return target


def _kind(spec: ClusterSpec) -> ClusterTarget:
    from winsuite.cluster.kind import KindTarget

    return KindTarget(spec.name, image=spec.kind_image)


def _kubeconfig(spec: ClusterSpec) -> ClusterTarget:
    from winsuite.cluster.kubeconfig import KubeconfigTarget

    return KubeconfigTarget(kubeconfig_of(spec), spec.context)


def _in_cluster(spec: ClusterSpec) -> ClusterTarget:
    from winsuite.cluster.kubeconfig import KubeconfigTarget

    return KubeconfigTarget(None, None, name="in-cluster")


def kubeconfig_of(spec: ClusterSpec) -> Path:
    """The kubeconfig file of a `kubeconfig` cluster: the one named (--kubeconfig or the job's), else the first of
    $KUBECONFIG, else ~/.kube/config (only a job whose cluster.type is kubeconfig names no file)."""
    if spec.kubeconfig:
        return Path(spec.kubeconfig).expanduser()
    return Path(os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)[0]).expanduser()


TARGETS: dict[ClusterType, Callable[[ClusterSpec], ClusterTarget]] = {
    ClusterType.EMBEDDED: _embedded,
    ClusterType.KIND: _kind,
    ClusterType.KUBECONFIG: _kubeconfig,
    ClusterType.IN_CLUSTER: _in_cluster,
}


def target_of(spec: ClusterSpec) -> ClusterTarget:
    return TARGETS[spec.type](spec)
