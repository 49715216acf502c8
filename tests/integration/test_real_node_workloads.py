"""Containers that really run, on the embedded cluster's real Linux node: probes, exec, logs, network, DNS,
volumes and kubelet stats. Pods are placed by OS selector; the simulated Linux node's taint keeps them off it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from typing import TypeVar

import pytest
from kubernetes import client
from tenacity import Retrying
from tenacity import retry_if_exception_type
from tenacity import stop_after_delay
from tenacity import wait_fixed

from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.cluster.embedded.config import CLUSTER_DNS_IP
from winsuite.cluster.embedded.config import KUBERNETES_SERVICE_IP
from winsuite.k8s import pods
from winsuite.k8s import services

pytestmark = [pytest.mark.cluster, pytest.mark.real_node]

T = TypeVar("T")
ON_LINUX = {"nodeSelector": {"kubernetes.io/os": "linux"}}
READY_TIMEOUT = 120.0


def netexec(cluster: EmbeddedCluster, name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """agnhost netexec, Ready only once the kubelet's HTTP probe of /healthz succeeds."""
    container = {
        "name": "netexec",
        "image": cluster.image("agnhost"),
        "args": ["netexec", "--http-port=8080"],
        "ports": [{"containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 1},
    }
    metadata = {"name": name, "labels": labels or {}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {**ON_LINUX, "containers": [container]},
    }


def client_pod(cluster: EmbeddedCluster, name: str = "client") -> dict[str, Any]:
    container = {"name": "client", "image": cluster.image("agnhost"), "args": ["pause"]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {**ON_LINUX, "containers": [container]},
    }


def eventually(check: Callable[[], T], timeout: float = 90.0) -> T:
    """Repeat an assertion on something that cannot be watched (logs, kubelet stats) until it holds."""
    retrying = Retrying(
        stop=stop_after_delay(timeout),
        wait=wait_fixed(1),
        retry=retry_if_exception_type(AssertionError),
        reraise=True,
    )
    return retrying(check)


def start(cluster: EmbeddedCluster, namespace: str, manifest: dict[str, Any]) -> client.V1Pod:
    pods.create(cluster.api, namespace, manifest)
    return pods.wait_for_pod(
        cluster.api, namespace, manifest["metadata"]["name"], state="Ready", timeout=READY_TIMEOUT
    )


def shell(cluster: EmbeddedCluster, namespace: str, pod: str, script: str) -> str:
    return pods.exec_(cluster.api, namespace, pod, ["sh", "-c", script]).check().stdout


def test_agnhost_pod_becomes_ready_through_its_http_readiness_probe(
    real_node: EmbeddedCluster, namespace: str
) -> None:
    ready = start(real_node, namespace, netexec(real_node, "probed"))

    assert ready.spec.node_name == real_node.real_node_name
    assert "GET /healthz" in pods.logs(real_node.api, namespace, "probed")  # the kubelet's probe, served


def test_exec_and_logs_return_the_containers_output(real_node: EmbeddedCluster, namespace: str) -> None:
    start(real_node, namespace, netexec(real_node, "talker"))

    assert shell(real_node, namespace, "talker", "echo out-$(hostname); echo err >&2") == "out-talker\n"
    assert "Started HTTP server on port 8080" in pods.logs(real_node.api, namespace, "talker")


def test_pod_to_pod_http(real_node: EmbeddedCluster, namespace: str) -> None:
    server = start(real_node, namespace, netexec(real_node, "server"))
    start(real_node, namespace, client_pod(real_node))

    answer = shell(real_node, namespace, "client", f"wget -qO- http://{server.status.pod_ip}:8080/hostname")

    assert answer == "server"


def test_cluster_ip_service_reaches_its_endpoint_from_another_pod(
    real_node: EmbeddedCluster, namespace: str
) -> None:
    start(real_node, namespace, netexec(real_node, "backend", labels={"app": "backend"}))
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "backend"},
        "spec": {"selector": {"app": "backend"}, "ports": [{"port": 80, "targetPort": 8080}]},
    }
    cluster_ip = services.create(real_node.api, namespace, service).spec.cluster_ip
    services.wait_for_endpoints(real_node.api, namespace, "backend", timeout=60)
    start(real_node, namespace, client_pod(real_node))

    assert shell(real_node, namespace, "client", f"wget -qO- http://{cluster_ip}/hostname") == "backend"


def test_cluster_dns_resolves_kubernetes_and_a_service(real_node: EmbeddedCluster, namespace: str) -> None:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "named"},
        "spec": {"selector": {"app": "none"}, "ports": [{"port": 80}]},
    }
    cluster_ip = services.create(real_node.api, namespace, service).spec.cluster_ip
    start(real_node, namespace, client_pod(real_node))

    def resolve(name: str) -> str:
        # busybox nslookup ignores the search path; ping resolves like any client would (and prints it).
        return shell(real_node, namespace, "client", f"ping -c 1 -W 1 {name} 2>&1 | head -n 1")

    resolv = shell(real_node, namespace, "client", "cat /etc/resolv.conf").splitlines()
    fqdn = shell(real_node, namespace, "client", "nslookup kubernetes.default.svc.cluster.local")

    assert f"nameserver {CLUSTER_DNS_IP}" in resolv
    assert f"search {namespace}.svc.cluster.local svc.cluster.local cluster.local" in resolv
    assert f"Server:\t\t{CLUSTER_DNS_IP}" in fqdn
    assert f"Address: {KUBERNETES_SERVICE_IP}" in fqdn
    assert resolve("kubernetes.default").startswith(f"PING kubernetes.default ({KUBERNETES_SERVICE_IP})")
    assert resolve("named").startswith(f"PING named ({cluster_ip})")


def test_a_pod_reaches_the_api_server_through_the_kubernetes_service(
    real_node: EmbeddedCluster, namespace: str
) -> None:
    # In-cluster config: KUBERNETES_SERVICE_HOST (the Service VIP), the service-account token, and TLS
    # verified against kube-root-ca.crt, i.e. the serving certificate must name the Service IP.
    poller = {
        "name": "poller",
        "image": real_node.image("agnhost"),
        "args": ["inclusterclient", "--poll-interval=1"],
    }
    spec = {**ON_LINUX, "containers": [poller]}
    pods.create(
        real_node.api,
        namespace,
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "poller"}, "spec": spec},
    )
    pods.wait_for_pod(real_node.api, namespace, "poller", state="Running", timeout=READY_TIMEOUT)

    log = eventually(lambda: _polled_twice(pods.logs(real_node.api, namespace, "poller")))

    assert "status=failed" not in log


def _polled_twice(log: str) -> str:
    assert log.count("calling /healthz") >= 2, log
    return log


def test_configmap_volume_is_read_back(real_node: EmbeddedCluster, namespace: str) -> None:
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings"},
        "data": {"greeting": "hi"},
    }
    real_node.core.create_namespaced_config_map(namespace, configmap)
    reader = {
        "name": "reader",
        "image": real_node.image("busybox"),
        "command": ["cat", "/etc/settings/greeting"],
        "volumeMounts": [{"name": "settings", "mountPath": "/etc/settings"}],
    }
    spec = {
        **ON_LINUX,
        "restartPolicy": "Never",
        "containers": [reader],
        "volumes": [{"name": "settings", "configMap": {"name": "settings"}}],
    }
    pods.create(
        real_node.api,
        namespace,
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "reader"}, "spec": spec},
    )

    pods.wait_for_pod(real_node.api, namespace, "reader", state="Succeeded", timeout=READY_TIMEOUT)

    assert pods.logs(real_node.api, namespace, "reader") == "hi"


def test_stats_summary_reports_the_pods_cpu_and_memory(real_node: EmbeddedCluster, namespace: str) -> None:
    start(real_node, namespace, netexec(real_node, "measured"))

    def measured() -> dict[str, Any]:
        response = real_node.core.connect_get_node_proxy_with_path(
            real_node.real_node_name, "stats/summary", _preload_content=False
        )
        entries = [p for p in json.loads(response.data)["pods"] if p["podRef"]["name"] == "measured"]
        assert entries and entries[0]["podRef"]["namespace"] == namespace, "pod not in the summary yet"
        assert entries[0]["cpu"]["usageCoreNanoSeconds"] > 0
        assert entries[0]["memory"]["workingSetBytes"] > 0
        return dict(entries[0])

    # cadvisor's housekeeping adds a new pod within ~15 s.
    pod = eventually(measured)

    assert [container["name"] for container in pod["containers"]] == ["netexec"]
