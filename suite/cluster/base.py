"""The protocol every cluster target implements, the job's cluster spec, and the registry of targets.

The registry is the one list of cluster types: the job schema's `cluster.type` values come from it. Targets are
imported only when chosen (the embedded one brings the kubernetes client, which `winsuite --help` does not need).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import Protocol


@dataclasses.dataclass(frozen=True)
class ClusterSpec:
    """A job's `cluster:` block."""

    type: str = "embedded"
    name: str = "winsuite"  # embedded or kind cluster name
    kubeconfig: str | None = None
    context: str | None = None
    real_node: bool = True  # embedded: join the real Linux node where the machine allows it
    kind_image: str | None = None  # kind: a node image to use instead of the one winsuite builds


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
    from winsuite.cluster.local import LocalCluster

    target: ClusterTarget = LocalCluster(name=spec.name, real_node=spec.real_node)
    return target


def _kind(spec: ClusterSpec) -> ClusterTarget:
    from winsuite.cluster.kind import KindTarget

    return KindTarget(spec.name, image=spec.kind_image)


def _kubeconfig(spec: ClusterSpec) -> ClusterTarget:
    from winsuite.cluster.kubeconfig import KubeconfigTarget

    return KubeconfigTarget(Path(spec.kubeconfig).expanduser() if spec.kubeconfig else _default_kubeconfig(),
                            spec.context)


def _in_cluster(spec: ClusterSpec) -> ClusterTarget:
    from winsuite.cluster.kubeconfig import KubeconfigTarget

    return KubeconfigTarget(None, None, name="in-cluster")


def _default_kubeconfig() -> Path:
    return Path(os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)[0]).expanduser()


# cluster.type -> factory.
TARGETS: dict[str, Callable[[ClusterSpec], ClusterTarget]] = {
    "embedded": _embedded,
    "kind": _kind,
    "kubeconfig": _kubeconfig,
    "in-cluster": _in_cluster,
}
CLUSTER_TYPES = tuple(TARGETS)


def target_of(spec: ClusterSpec) -> ClusterTarget:
    return TARGETS[spec.type](spec)
