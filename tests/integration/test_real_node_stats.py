"""The real node measures its own containers: cAdvisor (inside the kubelet) reads them from the node's private
containerd, whatever answers, or does not, at containerd's default socket on the host."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_real_node_workloads import eventually
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.cluster.embedded.realnode import stats_probe
from winsuite.cluster.embedded.realnode.node import RealNode
from winsuite.k8s import pods

pytestmark = [pytest.mark.cluster, pytest.mark.real_node]

# Where cAdvisor looks for containerd unless told otherwise.
HOST_DEFAULT_SOCKET = Path("/run/containerd/containerd.sock")


def answers(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(2)
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def node_of(cluster: EmbeddedCluster) -> RealNode:
    state = cluster.target.state()
    return RealNode(cluster.target.layout, {k: Path(v) for k, v in state.bins.items()}, state.ports)


def test_the_kubelet_names_the_nodes_own_containerd_to_cadvisor(real_node: EmbeddedCluster) -> None:
    kubelet = real_node.target.state().process("kubelet")
    assert kubelet is not None
    argv = Path(f"/proc/{kubelet.pid}/cmdline").read_bytes().decode().split("\0")
    node = node_of(real_node)

    assert f"--containerd={node.containerd.socket}" in argv
    assert "--containerd-namespace=k8s.io" in argv
    assert node.containerd.socket != HOST_DEFAULT_SOCKET
    log = node.layout.log("kubelet").read_text(errors="replace")
    assert stats_probe.FACTORY_FAILED not in log


def test_containers_cpu_and_memory_without_a_containerd_at_the_default_socket(
    real_node: EmbeddedCluster, namespace: str
) -> None:
    # The host condition the test is about: nothing answers at cAdvisor's default socket (this machine's Debian
    # containerd is installed but not started). Where one answers, stats could come from it; not this test's case.
    if answers(HOST_DEFAULT_SOCKET):
        pytest.skip(f"a containerd answers at {HOST_DEFAULT_SOCKET} on this machine; this test needs none there")
    busy = {"name": "busy", "image": real_node.image("busybox"), "command": ["sh", "-c", "while true; do :; done"],
            "resources": {"limits": {"cpu": "100m"}, "requests": {"cpu": "100m"}}}
    idle = {"name": "idle", "image": real_node.image("busybox"),
            "command": ["sh", "-c", "trap exit TERM; while true; do sleep 1; done"]}
    spec = {"nodeSelector": {"kubernetes.io/os": "linux"}, "containers": [busy, idle],
            "terminationGracePeriodSeconds": 0}
    pods.create(real_node.api, namespace, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "measured"},
                                           "spec": spec})
    pods.wait_for_pod(real_node.api, namespace, "measured", state="Ready", timeout=120)

    def measured() -> dict[str, Any]:
        response = real_node.core.connect_get_node_proxy_with_path(
            real_node.real_node_name, "stats/summary", _preload_content=False
        )
        entries = [p for p in json.loads(response.data)["pods"]
                   if (p["podRef"]["namespace"], p["podRef"]["name"]) == (namespace, "measured")]
        assert entries, "pod not in the summary yet"
        by_name = {c["name"]: c for c in entries[0]["containers"]}
        assert sorted(by_name) == ["busy", "idle"]
        for container in by_name.values():
            assert container["cpu"].get("usageCoreNanoSeconds", 0) > 0, container
            assert container["memory"].get("workingSetBytes", 0) > 0, container
        return by_name

    containers = eventually(measured)

    assert not answers(HOST_DEFAULT_SOCKET)  # still none while the figures were read
    assert containers["busy"]["cpu"]["usageCoreNanoSeconds"] > containers["idle"]["cpu"]["usageCoreNanoSeconds"]
