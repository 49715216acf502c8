"""The embedded cluster's add-ons, for real: a LoadBalancer Service gets an address on the bridge (with the
cleanup finalizer, as a cloud's service controller adds it) that reaches its pod, and the metrics API serves the
pods' CPU and memory through the API server's aggregation layer."""

from __future__ import annotations

import ipaddress
import subprocess
import urllib.request
from typing import Any

import pytest
from kubernetes import client

from tests.integration.test_real_node_workloads import eventually
from tests.integration.test_real_node_workloads import netexec
from tests.integration.test_real_node_workloads import start
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.cluster.embedded.config import BRIDGE
from winsuite.cluster.embedded.config import LOAD_BALANCER_RANGE
from winsuite.k8s import services
from winsuite.k8s import workloads

pytestmark = [pytest.mark.cluster, pytest.mark.real_node]

CLEANUP_FINALIZER = "service.kubernetes.io/load-balancer-cleanup"


def bridge_addresses() -> str:
    return subprocess.run(["ip", "-o", "-4", "addr", "show", "dev", BRIDGE], capture_output=True, text=True,
                          check=True).stdout


def in_pool(address: str) -> bool:
    first, last = (ipaddress.IPv4Address(a) for a in LOAD_BALANCER_RANGE)
    return first <= ipaddress.IPv4Address(address) <= last


def test_a_load_balancer_service_gets_an_address_on_the_bridge_that_reaches_its_pod(real_node: EmbeddedCluster,
                                                                                      namespace: str) -> None:
    start(real_node, namespace, netexec(real_node, "backend", {"app": "backend"}))
    services.create(real_node.api, namespace, {"metadata": {"name": "lb"}, "spec": {
        "type": "LoadBalancer", "selector": {"app": "backend"}, "ports": [{"port": 80, "targetPort": 8080}]}})
    core = client.CoreV1Api(real_node.api)

    served = workloads.wait_for_object(
        core.list_namespaced_service, name="lb", namespace=namespace, what="service lb to get a load balancer",
        condition=lambda svc: bool(svc.status.load_balancer.ingress) and CLEANUP_FINALIZER in (
            svc.metadata.finalizers or []), timeout=60)
    address = served.status.load_balancer.ingress[0].ip

    assert in_pool(address), address
    assert f" {address}/32 " in bridge_addresses()

    def reached() -> str:
        try:
            with urllib.request.urlopen(f"http://{address}/hostname", timeout=5) as answer:
                return str(answer.read().decode())
        except OSError as err:  # kube-proxy may not have written the address's rules yet
            raise AssertionError(f"http://{address}/hostname: {err}") from err

    hostname = eventually(reached)
    assert hostname == "backend"  # agnhost netexec answers with its pod's name, through kube-proxy

    core.delete_namespaced_service("lb", namespace)
    workloads.wait_for_gone(core.list_namespaced_service, name="lb", namespace=namespace, what="service lb",
                            timeout=60)
    assert f" {address}/32 " not in bridge_addresses()  # the finalizer held the Service until the address went


def test_the_metrics_api_serves_a_pods_cpu_and_memory(real_node: EmbeddedCluster, namespace: str) -> None:
    start(real_node, namespace, netexec(real_node, "measured"))
    metrics = client.CustomObjectsApi(real_node.api)

    def measured() -> dict[str, Any]:
        try:
            pod: dict[str, Any] = metrics.get_namespaced_custom_object("metrics.k8s.io", "v1beta1", namespace,
                                                                       "pods", "measured")
        except client.ApiException as err:  # 404 until the pod's first scrape
            raise AssertionError(f"no metrics for pod {namespace}/measured yet: {err.status} {err.reason}") from err
        usage = pod["containers"][0]["usage"]
        assert usage["cpu"] not in ("0", "0n") and usage["memory"] not in ("0", "0Ki"), usage
        return pod

    pod = eventually(measured, timeout=120)  # metrics-server scrapes every 15 s

    assert [c["name"] for c in pod["containers"]] == ["netexec"]
