"""Choosing and connecting to a cluster target: embedded (default), kind, a kubeconfig, or in-cluster."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from kubernetes import client

from winsuite.authoring.facts import ClusterFacts
from winsuite.cluster.base import ClusterTarget
from winsuite.cluster.base import target_of
from winsuite.cluster.discovery import discover
from winsuite.cluster.kubeconfig import api_client
from winsuite.cluster.kubeconfig import server_version
from winsuite.cluster.kubectl import with_kubectl
from winsuite.cluster.load_balancer import PROBE_TIMEOUT
from winsuite.inputs.cluster_spec import ClusterSpec


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
    target = target_of(spec)
    if spec.type == "embedded" and not start_embedded:
        kubeconfig = target.kubeconfig_path()  # an existing embedded cluster only
    else:
        target.connect()
        target.wait_ready(ready_timeout)
        kubeconfig = target.kubeconfig_path()
    context = spec.context if spec.type == "kubeconfig" else None
    api = api_client(None if spec.type == "in-cluster" else kubeconfig, context)
    return Connection(target, api, server_version(api), kubeconfig, context)


def discover_cluster(connection: Connection, windows_builds: list[str], *,
                     probe_load_balancer_for: str | None) -> ClusterFacts:
    """What the connected cluster is: its version, nodes and capabilities (`windows_builds`: those images exist for),
    and the kubectl its tests use; `probe_load_balancer_for`: the run id when a selected test needs a LoadBalancer
    implementation (a probe Service carrying the run's label is made to observe one), else None."""
    probe = PROBE_TIMEOUT if probe_load_balancer_for is not None else 0.0
    return with_kubectl(discover(connection.api, connection.server_version, windows_builds=windows_builds,
                                 egress_allowed=connection.target.allows_egress, load_balancer_probe=probe,
                                 run_id=probe_load_balancer_for))
