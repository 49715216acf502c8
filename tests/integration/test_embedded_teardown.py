"""`cluster down` of the session's cluster leaves nothing on the host (runs last: see conftest.py)."""

from __future__ import annotations

import pytest

from tests.tools.embedded_cluster import EmbeddedCluster

pytestmark = pytest.mark.cluster


@pytest.fixture
def stopped_cluster(cluster: EmbeddedCluster) -> list[str]:
    """Stop the session's cluster and return what it left; only a cluster this session started."""
    if not cluster.started_by_session:
        pytest.skip(f"cluster {cluster.name} was running before this session; it is left running")
    return cluster.stop()


def test_down_leaves_no_process_port_mount_or_network_object(stopped_cluster: list[str]) -> None:
    # Processes (components, shims, containers), listening ports, mounts; with the real node also
    # the bridge, KUBE-*/CNI-* iptables chains, network namespaces, host directories and cgroups.
    assert stopped_cluster == []
