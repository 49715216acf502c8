"""Windows pod density (density.go): a batch of pods starts within the startup-latency limits."""

from __future__ import annotations

import dataclasses
import math
import time
import uuid
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Feature
from winsuite.authoring.naming import Serial
from winsuite.authoring.naming import Slow
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import manifests
from winsuite.k8s import nodes
from winsuite.k8s import objects
from winsuite.k8s import pods
from winsuite.k8s.waits import wait_for_set

density = Describe(Area("sig-windows"), Feature("Windows"), "Density", Serial, Slow)
batch = density.describe("create a batch of pods")

POD_TYPE = "density_test_pod"
DELETE_GRACE_SECONDS = 30
GONE_TIMEOUT = 600.0


@dataclasses.dataclass(frozen=True)
class DensityTest:
    pods: int
    interval: float  # seconds between two creations: upstream's only entry creates them back to back
    # Percentile limits of a single pod's startup latency (e2emetrics.LatencyMetric), in seconds.
    perc50: float
    perc90: float
    perc99: float
    batch_limit: float  # upper bound of the whole batch's startup, in seconds

    @property
    def description(self) -> str:
        return (f"latency/resource should be within limit when create {self.pods} pods with "
                f"{self.interval:.0f}s interval")


# Upstream's table: generous values, to be tightened with benchmark data.
TEN_PODS = DensityTest(pods=10, interval=0.0, perc50=30.0, perc90=54.0, perc99=59.0, batch_limit=600.0)


def density_pods(target: Target, count: int) -> list[dict[str, Any]]:
    """newDensityTestPods: pause pods labelled with the test's pod type."""
    made = []
    for _ in range(count):
        name = f"test-{uuid.uuid4()}"
        pause = manifests.container(name, target.image("pause"))
        made.append(target.place(manifests.pod(name, [pause], labels={"type": POD_TYPE, "name": name})))
    return made


def percentile(latencies: list[float], percent: int) -> float:
    """e2emetrics.ExtractLatencyMetrics on sorted latencies."""
    return latencies[math.ceil(len(latencies) * percent / 100) - 1]


def run_density_batch(api: client.ApiClient, namespace: str, target: Target,
                      test: DensityTest) -> tuple[float, list[float]]:
    """runDensityBatchTest: create the batch, note when each pod is first seen Running; the batch's lag and
    each pod's startup latency, sorted."""
    batch = density_pods(target, test.pods)
    created: dict[str, float] = {}
    for manifest in batch:
        created[manifest["metadata"]["name"]] = time.time()
        pods.create(api, namespace, manifest)
    running: dict[str, float] = {}

    def all_observed(items: list[client.V1Pod]) -> bool:
        for pod in items:
            if pods.phase_of(pod) == "Running":
                running.setdefault(objects.name_of(pod), time.time())
        return len(running) == test.pods

    wait_for_set(client.CoreV1Api(api).list_namespaced_pod, namespace=namespace,
                 label_selector=f"type={POD_TYPE}", what=f"all {test.pods} pods to be observed Running",
                 condition=all_observed,
                 timeout=test.batch_limit, describe=lambda items: f"Running: {sorted(running)}")
    latencies = sorted(running[name] - start for name, start in created.items())
    batch_lag = max(running.values()) - min(created.values())
    delete_and_wait_gone(api, namespace, list(created))
    return batch_lag, latencies


def delete_and_wait_gone(api: client.ApiClient, namespace: str, names: list[str]) -> None:
    """deletePodsSync."""
    for name in names:
        pods.delete(api, namespace, name, grace_seconds=DELETE_GRACE_SECONDS)
    wait_for_set(client.CoreV1Api(api).list_namespaced_pod, namespace=namespace,
                 label_selector=f"type={POD_TYPE}", what=f"{len(names)} pods to be deleted",
                 condition=lambda items: not items, timeout=GONE_TIMEOUT,
                 describe=lambda items: f"still there: {[objects.name_of(p) for p in items]}")


@windows_pods(lambda target: density_pods(target, TEN_PODS.pods), upstream="test/e2e/windows/density.go:66-73,225-266")
@batch.it(TEN_PODS.description,
          twin="[sig-windows] [Feature:Windows] Density [Serial] [Slow] create a batch of pods "
               "latency/resource should be within limit when create 10 pods with 0s interval",
          category="Core.Concurrent", needs=[Capability.WINDOWS_KERNEL])
def test_batch_startup_latency(api: client.ApiClient, namespace: str, target: Target) -> None:
    """Upstream computes the latencies and leaves its limits unchecked; winsuite checks them, as the name
    says."""
    nodes.skip_unless_target_os_is_windows(target.os)
    batch_lag, latencies = run_density_batch(api, namespace, target, TEN_PODS)
    observed = {50: percentile(latencies, 50), 90: percentile(latencies, 90), 99: percentile(latencies, 99)}
    limits = {50: TEN_PODS.perc50, 90: TEN_PODS.perc90, 99: TEN_PODS.perc99}
    over = {f"perc{p}": f"{observed[p]:.1f}s > {limits[p]:.0f}s" for p in observed if observed[p] > limits[p]}
    assert not over, f"pod startup latency over its limits: {over} (sorted latencies: {latencies})"
    assert batch_lag <= TEN_PODS.batch_limit, (
        f"the batch took {batch_lag:.0f}s, over {TEN_PODS.batch_limit:.0f}s")
