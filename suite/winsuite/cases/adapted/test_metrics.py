"""Pod and container metrics from the kubelet, through the API server's node proxy: /stats/summary and
/metrics/resource (test/e2e/instrumentation/metrics.go)."""

from __future__ import annotations

import json
import re
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import Target
from winsuite.k8s import manifests
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import waits

pod_metrics = Describe(Area("sig-node"), "Pod and container metrics")
metrics = Describe(Area("sig-instrumentation"), "Metrics")

NEEDS = [Capability.RUNS_CONTAINERS, Capability.STATS_SUMMARY]
STATS_TIMEOUT = 120.0  # the kubelet refreshes container stats every 10-15 s
BUSY, IDLE = "busy", "idle"


def node_proxy_get(api: client.ApiClient, node: str, path: str) -> str:
    """GET a kubelet endpoint through the API server's node proxy."""
    # Raw: the client would otherwise parse a JSON answer and hand back its Python repr.
    response = retry.call(client.CoreV1Api(api).connect_get_node_proxy_with_path, node, path,
                          _preload_content=False)
    return str(response.data.decode())


def two_container_pod(target: Target) -> manifests.Manifest:
    """One container busy (capped at 100m so it cannot starve the node), one asleep."""
    busy = manifests.container(BUSY, target.image("busybox"), command=["sh", "-c", "while true; do :; done"],
                               resources=manifests.resources({"cpu": "100m"}, {"cpu": "100m"}))
    idle = manifests.container(IDLE, target.image("busybox"),
                               command=["sh", "-c", "trap exit TERM; while true; do sleep 1; done"])
    return target.place(manifests.pod("metrics", [busy, idle], terminationGracePeriodSeconds=0))


def pod_stats(summary: dict[str, Any], namespace: str) -> dict[str, Any] | None:
    return next((p for p in summary.get("pods", []) if p["podRef"]["namespace"] == namespace
                 and p["podRef"]["name"] == "metrics"), None)


def usage_missing(stats: dict[str, Any] | None) -> list[str]:
    """What the summary lacks: the pod, or CPU and memory figures of the pod and each of its containers."""
    if stats is None:
        return ["the pod"]
    missing = []
    by_name = {c["name"]: c for c in stats.get("containers", [])}
    for name, entry in [("pod", stats), *((c, by_name.get(c)) for c in (BUSY, IDLE))]:
        if entry is None:
            missing.append(f"container {name}")
            continue
        if not entry.get("cpu", {}).get("usageCoreNanoSeconds"):
            missing.append(f"{name} cpu.usageCoreNanoSeconds")
        if not entry.get("memory", {}).get("workingSetBytes"):
            missing.append(f"{name} memory.workingSetBytes")
    if not by_name.get(BUSY, {}).get("cpu", {}).get("usageNanoCores"):
        missing.append(f"{BUSY} cpu.usageNanoCores (it spins)")
    return missing


@pod_metrics.it("should report the CPU and memory of a running pod and of each of its containers in the "
                "kubelet's stats summary", needs=NEEDS, images=["busybox"])
def test_stats_summary(api: client.ApiClient, namespace: str, target: Target) -> None:
    """KEP-116 "What works today": pod and container metrics."""
    node = pods.start(api, namespace, two_container_pod(target), state="Ready").spec.node_name

    def reported() -> str:
        stats = pod_stats(json.loads(node_proxy_get(api, node, "stats/summary")), namespace)
        missing = usage_missing(stats)
        detail = f"missing {missing} in {json.dumps(stats)[:1500]}"
        assert not missing, detail
        return detail

    waits.poll(f"node {node}'s stats summary to report pod {namespace}/metrics", reported,
               timeout=STATS_TIMEOUT)


@metrics.it("should grab all metrics from kubelet /metrics/resource endpoint",
            twin="[sig-instrumentation] Metrics should grab all metrics from kubelet /metrics/resource endpoint",
            needs=NEEDS, images=["busybox"])
def test_kubelet_resource_metrics(api: client.ApiClient, namespace: str, target: Target) -> None:
    # Upstream grabs a random node's endpoint and wants it non-empty; here the node runs a pod of the
    # target OS, and the endpoint must also carry that pod's containers, with CPU and memory measured (non-zero).
    node = pods.start(api, namespace, two_container_pod(target), state="Ready").spec.node_name

    def grabbed() -> str:
        text = node_proxy_get(api, node, "metrics/resource")
        wanted = [f'{metric}{{container="{name}",namespace="{namespace}",pod="metrics"}}'
                  for metric in ("container_cpu_usage_seconds_total", "container_memory_working_set_bytes")
                  for name in (BUSY, IDLE)]
        # A sample's value, then its timestamp: "name{labels} 0.0123 1700000000000". Zero is no measurement.
        missing = [w for w in wanted if not any(float(value) > 0 for value in
                                                re.findall(re.escape(w) + r" ([0-9.e+-]+)", text))]
        detail = f"missing or zero {missing}; got {len(text)} bytes"
        assert bool(text.strip()) and not missing, detail
        return detail

    waits.poll(f"node {node}'s /metrics/resource to carry pod {namespace}/metrics", grabbed,
               timeout=STATS_TIMEOUT)
