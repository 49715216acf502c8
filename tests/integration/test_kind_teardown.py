"""`cluster down --type kind` leaves no container, volume, network, mount, process or firewall rule (runs last)."""

from __future__ import annotations

import subprocess

import pytest

from tests.integration.kind_support import KindCluster
from tests.integration.kind_support import embedded_running
from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.tools.host_state import HostState
from winsuite.cluster.embedded.config import BRIDGE
from winsuite.cluster.embedded.realnode.iptables import EGRESS_CHAIN
from winsuite.cluster.kind import engine as engines
from winsuite.cluster.kind import leftovers
from winsuite.cluster.kind import network
from winsuite.cluster.kind.state import load
from winsuite.paths import cache_dir

pytestmark = [pytest.mark.kind, pytest.mark.cluster]


def embedded_clusters_own(item: str) -> bool:
    """Host objects of an embedded cluster running beside the kind cluster (its bridge, its kube-proxy's and
    kubelet's chains and its egress guard, the mounts under its directory, its pods' network namespaces and the
    /run/netns mount that holds them, which stays while they may). kind's kube-proxy keeps its chains in the node's
    network namespace, and kind's network adds no rule."""
    return (BRIDGE in item or "KUBE-" in item or EGRESS_CHAIN in item or str(cache_dir() / "clusters") in item
            or "10.244." in item or item.startswith("/run/netns/cni-") or item == "/run/netns")


def nothing_else(item: str) -> bool:
    return False


@pytest.fixture
def deleted_kind_cluster(kind_cluster: KindCluster) -> tuple[KindCluster, list[str], HostState]:
    """Delete the session's kind cluster with the CLI; what it left by its own check, and the host after."""
    if not kind_cluster.started_by_session:
        pytest.skip(f"kind cluster {kind_cluster.name} was running before this session; it is left running")
    state = load(kind_cluster.target.layout)
    done = subprocess.run([*WINSUITE, "cluster", "down", "--type", "kind", "--name", kind_cluster.name],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0 and "with problems" not in done.stderr, done.stderr
    kind_cluster.target.started = False  # deleted here: the session's teardown has nothing left to do
    return kind_cluster, leftovers.after_down(engines.choose(), kind_cluster.target.layout, state), HostState.now()


def test_down_leaves_no_container_network_mount_process_or_rule(
        deleted_kind_cluster: tuple[KindCluster, list[str], HostState]) -> None:
    cluster, left, after = deleted_kind_cluster
    assert left == []
    # With no embedded cluster up before or now, every change counts; otherwise the embedded cluster's own (and IP
    # forwarding, which its real node turns on while it runs) are left to its own teardown test.
    embedded = cluster.embedded_before or embedded_running()
    ignore = embedded_clusters_own if embedded else nothing_else
    changes = after.changes_since(cluster.host_before, ignore, forwarding=not embedded)
    # winsuite's kind bridge left by an interrupted earlier session is reused by `up` and removed by `down` with the
    # rest of its network (`left` above says it is gone): its removal is the clean-up, not a change it made.
    assert [change for change in changes if change != f"interface removed: {network.BRIDGE}"] == []
