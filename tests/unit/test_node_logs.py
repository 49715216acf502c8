"""Node logs: which services of a node, and a file log cut to the run's window (no cluster needed)."""

from __future__ import annotations

import datetime

from winsuite.authoring.facts import NodeFacts
from winsuite.run.node_logs import in_window
from winsuite.run.node_logs import services_of

SINCE = datetime.datetime(2026, 11, 24, 10, 30, tzinfo=datetime.UTC)
UNTIL = datetime.datetime(2026, 11, 24, 10, 40, tzinfo=datetime.UTC)
KUBELET = """I1124 10:29:59.999999    1234 kubelet.go:100] before the run
I1124 10:30:00.000001    1234 kubelet.go:101] the run starts
E1124 10:35:12.500000    1234 pod_workers.go:1301] "Error syncing pod" err="failed"
	goroutine 1 [running]:
	continuation of the error above
W1124 10:40:00.000000    1234 kubelet.go:102] the run ends
I1124 10:40:00.000001    1234 kubelet.go:103] after the run
"""
CONTAINERD = """time="2026-11-24T10:29:00.000000000Z" level=info msg="before"
time="2026-11-24T10:31:00.123456789Z" level=info msg="RunPodSandbox"
time="2026-11-24T10:41:00.000000000Z" level=info msg="after"
"""


def node(os_name: str, runtime: str) -> NodeFacts:
    return NodeFacts(name="n", os=os_name, windows_build=None, kubelet_version="v1.36.3", container_runtime=runtime,
                     os_image="", kernel_version="", simulated=False, ready=True, unschedulable=False, taints=[],
                     labels={}, allocatable={}, capacity={}, internal_ip=None, provider_id=None)


def test_klog_lines_of_the_window_are_kept_with_their_continuations() -> None:
    kept = in_window(KUBELET, SINCE, UNTIL).splitlines()
    assert kept[0].endswith("the run starts") and kept[-1].endswith("the run ends")
    assert "\tcontinuation of the error above" in kept and len(kept) == 5


def test_logfmt_timestamps_are_read_too() -> None:
    assert in_window(CONTAINERD, SINCE, UNTIL).count("\n") == 1 and "RunPodSandbox" in in_window(CONTAINERD, SINCE,
                                                                                                    UNTIL)


def test_lines_before_any_timestamp_are_left_out() -> None:
    assert in_window("no timestamp at all\n", SINCE, UNTIL) == ""


def test_the_services_are_the_kubelet_the_node_runtime_and_kube_proxy() -> None:
    assert services_of(node("linux", "containerd://1.7.20")) == ["kubelet", "containerd", "kube-proxy"]
    assert services_of(node("linux", "cri-o://1.30.1")) == ["kubelet", "cri-o", "kube-proxy"]
    assert services_of(node("windows", "")) == ["kubelet", "containerd", "kube-proxy"]
