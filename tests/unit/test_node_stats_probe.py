"""The real node's readiness probe reads its container's CPU and memory out of a kubelet stats summary."""

from __future__ import annotations

from typing import Any

from winsuite.cluster.embedded.realnode import stats_probe


def summary(cpu: int, memory: int, *, name: str = stats_probe.POD) -> dict[str, Any]:
    container = {"name": stats_probe.CONTAINER, "cpu": {"usageCoreNanoSeconds": cpu},
                 "memory": {"workingSetBytes": memory}}
    pod = {"podRef": {"namespace": stats_probe.NAMESPACE, "name": name}, "containers": [container],
           "cpu": {"usageCoreNanoSeconds": 27_000_000_000}, "memory": {"workingSetBytes": 600_000}}
    return {"node": {"nodeName": "linux-0"}, "pods": [pod]}


def test_the_probe_containers_figures_are_read() -> None:
    assert stats_probe.container_usage(summary(18_700_000, 512_000)) == (18_700_000, 512_000)


def test_a_container_cadvisor_cannot_see_reads_as_zero_not_as_the_pods_figures() -> None:
    # What the kubelet reports when cAdvisor has no containerd factory: the pod's cgroup, containers at 0.
    assert stats_probe.container_usage(summary(0, 0)) == (0, 0)
    bare = summary(0, 0)
    bare["pods"][0]["containers"][0] = {"name": stats_probe.CONTAINER}
    assert stats_probe.container_usage(bare) == (0, 0)


def test_a_summary_without_the_probe_pod_has_no_figures() -> None:
    assert stats_probe.container_usage(summary(1, 1, name="other")) is None
    assert stats_probe.container_usage({"node": {}}) is None


def test_the_probe_pod_is_placed_by_selector_and_never_pulls() -> None:
    pod = stats_probe.manifest("linux-0", "winsuite.local/busybox:1.36.1-1")

    assert pod["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "linux-0"}
    assert "nodeName" not in pod["spec"]
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == "Never"
