"""The container runtime of Windows nodes (seed 002 "Container runtimes": containerd 1.4.0+)."""

from __future__ import annotations

import re

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import ClusterSession

runtime = Describe(Area("sig-windows"), "Container runtime")
MINIMUM_CONTAINERD = (1, 4)


@runtime.it("Windows nodes should run containerd 1.4.0 or newer", category="Extend.Worker",
            needs=[Capability.WINDOWS_KERNEL])
def test_windows_nodes_run_containerd(cluster: ClusterSession) -> None:
    """What real Windows kubelets report; dockershim is gone, and older containerd lacks Windows support."""
    nodes = [n for n in cluster.facts.nodes if n.os == "windows" and not n.simulated]
    assert nodes, "discovery found no real Windows node"
    for node in nodes:
        m = re.match(r"containerd://v?(\d+)\.(\d+)", node.container_runtime)
        assert m is not None, f"node {node.name} runs {node.container_runtime!r}, not containerd"
        version = (int(m.group(1)), int(m.group(2)))
        assert version >= MINIMUM_CONTAINERD, f"node {node.name} runs {node.container_runtime}, older than 1.4.0"
