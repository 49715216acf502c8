"""Benchmark tests: N trivial ones (one ConfigMap each) and M waiting ones (a pod on a simulated node)."""

from __future__ import annotations

import os

import pytest
from kubernetes import client

from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import Target
from winsuite.k8s import pods

COUNT = int(os.environ.get("WINSUITE_BENCH_TESTS", "0"))
trivial = Describe(Area("sig-testing"), "winsuite bench")


@pytest.mark.skipif(not COUNT, reason="WINSUITE_BENCH_TESTS is 0")
@trivial.it_each("trivial test {entry}", argname="number", entries={f"{i:04d}": i for i in range(COUNT)})
def test_trivial(api: client.ApiClient, namespace: str, number: int) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "trivial"}, "data": {"n": str(number)}})
    assert core.read_namespaced_config_map("trivial", namespace).data == {"n": str(number)}


WAITING = int(os.environ.get("WINSUITE_BENCH_WAITING_TESTS", "0"))


@pytest.mark.skipif(not WAITING, reason="WINSUITE_BENCH_WAITING_TESTS is 0")
@trivial.it_each("waiting test {entry}", argname="number", entries={f"{i:04d}": i for i in range(WAITING)})
def test_waiting(api: client.ApiClient, namespace: str, target: Target, number: int) -> None:
    """Mostly waiting, like real tests: a pod scheduled to a simulated node until kwok reports it Running."""
    placed = target.scheduling_only().place({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "waiting"},
        "spec": {"containers": [{"name": "pause", "image": target.image("pause")}]}})
    pods.create(api, namespace, placed)
    pods.wait_for_pod(api, namespace, "waiting", state="Running", timeout=60)
