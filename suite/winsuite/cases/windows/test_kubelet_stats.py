"""Kubelet stats on Windows nodes (kubelet_stats.go): /stats/summary is complete and answers within 10 s."""

from __future__ import annotations

import time
import uuid
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Feature
from winsuite.authoring.naming import Serial
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import no_pods
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import kubelet
from winsuite.k8s import manifests
from winsuite.k8s import nodes
from winsuite.k8s import objects
from winsuite.k8s import pods

COLLECTION = "Kubelet stats collection for Windows nodes"
serial_stats = Describe(Area("sig-windows"), Feature("Windows"), "Kubelet-Stats", Serial).describe(COLLECTION)
stats = Describe(Area("sig-windows"), Feature("Windows"), "Kubelet-Stats").describe(COLLECTION)

# The default scrape timeout of metrics-server and kube-prometheus.
SCRAPE_TIMEOUT = 10.0
FETCH_SPACING = 5.0  # upstream sleeps 5 s after each fetch of the summary
RUNNING_TIMEOUT = 180.0
NEEDS = [Capability.WINDOWS_KERNEL, Capability.STATS_SUMMARY]


def stats_test_pods(target: Target, count: int, node: str) -> list[dict[str, Any]]:
    """newKubeletStatsTestPods: PowerShell pods with an init container, all on one node."""
    made = []
    for index in range(count):
        name = f"statscollectiontest-{uuid.uuid4()}"
        sleeper = manifests.container("stat-container", target.image("busybox"),
                                      command=["powershell.exe", "-Command", "sleep -Seconds 600"])
        init = manifests.container("init-container", target.image("busybox"),
                                   command=["powershell.exe", "-Command", "sleep -Seconds 1"])
        labels = {"name": name, "testapp": "stats-collection"}
        manifest = manifests.pod(f"{name}-{index}", [sleeper], labels=labels, initContainers=[init])
        made.append(manifests.pin_to_node(target.place(manifest), node))
    return made


def check_pod_stats(entry: dict[str, Any]) -> None:
    """The sanity checks upstream makes on each of its pods' stats."""
    ref = f"{entry['podRef']['namespace']}/{entry['podRef']['name']}"
    cpu = (entry.get("cpu") or {}).get("usageCoreNanoSeconds", 0)
    assert cpu > 0, f"pod {ref} stats report cpu usage equal to {cpu} but it should be greater than 0"
    memory = (entry.get("memory") or {}).get("workingSetBytes", 0)
    assert memory > 0, f"pod {ref} stats report {memory} bytes for memory working set; it should be > 0"
    for container in entry.get("containers") or []:
        logs = container.get("logs")
        assert logs is not None, f"pod {ref} stats should have container log stats, but it is nil"
        available = logs.get("availableBytes", 0)
        assert available > 0, f"pod {ref} container log stats report {available} bytes for AvailableBytes, " \
                              f"but it should be greater than 0"


def assert_stats_within_scrape_timeout(api: client.ApiClient, namespace: str, target: Target, *, count: int,
                                       iterations: int) -> None:
    """Run `count` pods on one Windows node, then fetch its summary `iterations` times, 5 s apart as upstream
    (back to back, the later fetches would time the kubelet's warm caches): every one of our pods has sane
    stats each time, and the average request takes at most 10 s."""
    nodes.skip_unless_target_os_is_windows(target.os)
    node = objects.name_of(nodes.find_windows_node(api))
    pods.create_all(api, namespace, stats_test_pods(target, count, node), timeout=RUNNING_TIMEOUT)
    durations = []
    for iteration in range(iterations):
        if iteration:
            time.sleep(FETCH_SPACING)
        summary, took = kubelet.timed_stats_summary(api, node)
        durations.append(took)
        ours = kubelet.pod_stats(summary, namespace)
        for entry in ours:
            check_pod_stats(entry)
        assert len(ours) == count, f"should find stats for {count} pods in kubelet stats, found {len(ours)}"
    average = sum(durations) / iterations
    assert average <= SCRAPE_TIMEOUT, (
        f"collecting kubelet stats of {node} took {average:.1f}s on average over {iterations} iterations, "
        f"but it should not take longer than {SCRAPE_TIMEOUT:.0f}s")


@windows_pods(lambda target: stats_test_pods(target, 10, "win-0"), upstream="test/e2e/windows/kubelet_stats.go:50-118")
@serial_stats.it("when running 10 pods", "should return within 10 seconds",
                 twin="[sig-windows] [Feature:Windows] Kubelet-Stats [Serial] Kubelet stats collection for "
                      "Windows nodes when running 10 pods should return within 10 seconds",
                 category="Core.Network", needs=NEEDS, images=["busybox"])
def test_stats_of_ten_pods(api: client.ApiClient, namespace: str, target: Target) -> None:
    assert_stats_within_scrape_timeout(api, namespace, target, count=10, iterations=5)


@no_pods("reads the bootID of a Windows node's status")
@stats.it("when windows is booted", "should return bootid within 10 seconds",
          twin="[sig-windows] [Feature:Windows] Kubelet-Stats Kubelet stats collection for Windows nodes "
               "when windows is booted should return bootid within 10 seconds",
          category="Extend.Worker", needs=[Capability.WINDOWS_KERNEL])
def test_boot_id(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    node = nodes.find_windows_node(api)
    assert nodes.boot_id(node), f"expected a bootID in the node status of {objects.name_of(node)}, got none"


@windows_pods(lambda target: stats_test_pods(target, 3, "win-0"), upstream="test/e2e/windows/kubelet_stats.go:142-210")
@stats.it("when running 3 pods", "should return within 10 seconds",
          twin="[sig-windows] [Feature:Windows] Kubelet-Stats Kubelet stats collection for Windows nodes "
               "when running 3 pods should return within 10 seconds",
          category="Extend.Worker", needs=NEEDS, images=["busybox"])
def test_stats_of_three_pods(api: client.ApiClient, namespace: str, target: Target) -> None:
    assert_stats_within_scrape_timeout(api, namespace, target, count=3, iterations=1)
