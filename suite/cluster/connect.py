"""Choosing and connecting to a cluster target: embedded (default), kind, a kubeconfig, or in-cluster."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kubernetes import client

from winsuite.cluster.base import ClusterTarget
from winsuite.cluster.kind import KindTarget
from winsuite.cluster.kubeconfig import KubeconfigTarget
from winsuite.cluster.kubeconfig import api_client
from winsuite.cluster.kubeconfig import server_version
from winsuite.policy.jobs import ClusterSpec
from winsuite.policy.jobs import resolve_job


def _embedded(spec: ClusterSpec) -> ClusterTarget:
    from winsuite.cluster.local import LocalCluster

    target: ClusterTarget = LocalCluster(name=spec.name, real_node=spec.real_node)
    return target


def _kubeconfig(spec: ClusterSpec) -> ClusterTarget:
    return KubeconfigTarget(Path(spec.kubeconfig).expanduser() if spec.kubeconfig else _default_kubeconfig(),
                            spec.context)


def _default_kubeconfig() -> Path:
    import os

    return Path(os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)[0]).expanduser()


# The registry of targets: cluster.type -> factory. No import side effects; the embedded target is
# imported only when chosen.
TARGETS: dict[str, Callable[[ClusterSpec], ClusterTarget]] = {
    "embedded": _embedded,
    "kind": lambda spec: KindTarget(spec.name),
    "kubeconfig": _kubeconfig,
    "in-cluster": lambda spec: KubeconfigTarget(None, None, name="in-cluster"),
}


@dataclasses.dataclass
class Connection:
    target: ClusterTarget
    api: client.ApiClient
    server_version: str
    kubeconfig: Path
    context: str | None

    @property
    def server(self) -> str:
        return str(self.api.configuration.host)


def connect(spec: ClusterSpec, *, start_embedded: bool = True, ready_timeout: float = 600.0) -> Connection:
    """Connect to the job's cluster (building and starting the embedded one when allowed)."""
    target = TARGETS[spec.type](spec)
    if spec.type == "embedded" and not start_embedded:
        kubeconfig = target.kubeconfig_path()  # an existing embedded cluster only
    else:
        target.connect()
        target.wait_ready(ready_timeout)
        kubeconfig = target.kubeconfig_path()
    context = spec.context if spec.type == "kubeconfig" else None
    api = api_client(None if spec.type == "in-cluster" else kubeconfig, context)
    return Connection(target, api, server_version(api), kubeconfig, context)


def connect_from_options(job_ref: str | None, overrides: Mapping[str, Any], *,
                         start_embedded: bool = True) -> Connection:
    import os

    return connect(resolve_job(job_ref, os.environ, overrides).cluster, start_embedded=start_embedded)
