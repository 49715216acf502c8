"""The real node is ready when a container it runs shows non-zero CPU and memory in the kubelet's stats summary."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from kubernetes import client

from winsuite.components.errors import ComponentFailed
from winsuite.k8s import pods
from winsuite.k8s.waits import WaitTimeout
from winsuite.k8s.waits import poll

NAMESPACE = "kube-system"
POD = "winsuite-node-stats-probe"
CONTAINER = "probe"
LABEL = f"app.kubernetes.io/name={POD}"
START_TIMEOUT = 60.0
STATS_TIMEOUT = 90.0  # cAdvisor's housekeeping adds a new container within 10-15 s
GONE_TIMEOUT = 30.0
# What cAdvisor logs (kubelet --v=2) when it cannot reach containerd: the cause of all-zero container stats.
FACTORY_FAILED = "Registration of the containerd container factory failed"


def manifest(node: str, image: str) -> dict[str, Any]:
    """A busybox shell asleep on the node: a few hundred KB of memory and the CPU its start took."""
    container = {"name": CONTAINER, "image": image, "imagePullPolicy": "Never",
                 "command": ["sh", "-c", "trap exit TERM; while true; do sleep 1; done"]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": POD, "namespace": NAMESPACE, "labels": {"app.kubernetes.io/name": POD}},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": node},
            "containers": [container],
            "automountServiceAccountToken": False,
            "terminationGracePeriodSeconds": 0,
        },
    }


def container_usage(summary: dict[str, Any]) -> tuple[int, int] | None:
    """The probe container's (usageCoreNanoSeconds, workingSetBytes) in a stats summary; None when absent."""
    for pod in summary.get("pods", []):
        if pod["podRef"]["namespace"] == NAMESPACE and pod["podRef"]["name"] == POD:
            for entry in pod.get("containers", []):
                if entry["name"] == CONTAINER:
                    cpu = entry.get("cpu", {}).get("usageCoreNanoSeconds") or 0
                    memory = entry.get("memory", {}).get("workingSetBytes") or 0
                    return int(cpu), int(memory)
    return None


def _factory_failure(kubelet_log: Path) -> str:
    """cAdvisor's own words for why it sees no container, from the kubelet's log ('' when it said nothing)."""
    try:
        lines = [line for line in kubelet_log.read_text(errors="replace").splitlines() if FACTORY_FAILED in line]
    except OSError:
        return ""
    return f"; the kubelet's log says: {lines[-1].strip()[-300:]}" if lines else ""


def wait_for_container_stats(core: client.CoreV1Api, node: str, image: str, kubelet_log: Path) -> float:
    """Run the probe pod on `node` until the summary carries its container's CPU and memory; remove it after.

    Returns the seconds taken; raises ComponentFailed naming the part that did not come up.
    """
    started = time.monotonic()
    api = core.api_client
    try:
        pods.create(api, NAMESPACE, manifest(node, image))
    except client.ApiException as err:
        if err.status != 409:  # a probe left by an interrupted `up` of a reused cluster is as good
            raise
    try:
        try:
            pods.wait_for_pod(api, NAMESPACE, POD, state="Running", timeout=START_TIMEOUT)
        except (WaitTimeout, AssertionError) as err:
            raise ComponentFailed(f"real node {node}: its probe pod did not start: {err}") from err

        def usage() -> tuple[int, int]:
            response = core.connect_get_node_proxy_with_path(node, "stats/summary", _preload_content=False)
            found = container_usage(json.loads(response.data))
            assert found is not None, f"container {CONTAINER} of pod {NAMESPACE}/{POD} not in the summary"
            assert all(found), f"usageCoreNanoSeconds={found[0]}, workingSetBytes={found[1]}"
            return found

        try:
            poll(f"node {node}'s stats summary to report container CPU and memory", usage, timeout=STATS_TIMEOUT)
        except WaitTimeout as err:
            raise ComponentFailed(
                f"real node {node}: the kubelet's stats summary has no CPU and memory for a running container "
                f"after {STATS_TIMEOUT:.0f}s ({err.last}){_factory_failure(kubelet_log)}"
            ) from err
    finally:
        _remove(api)
    return time.monotonic() - started


def _remove(api: client.ApiClient) -> None:
    """Delete the probe and watch it go, so no test sees it."""
    try:
        pods.delete(api, NAMESPACE, POD, grace_seconds=0)
    except client.ApiException as err:
        if err.status != 404:
            raise
    pods.wait_for_no_pods(api, NAMESPACE, label_selector=LABEL, what=f"pod {NAMESPACE}/{POD} to be gone",
                                timeout=GONE_TIMEOUT)
