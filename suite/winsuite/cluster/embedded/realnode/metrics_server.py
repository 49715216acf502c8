"""The resource metrics API (metrics.k8s.io): metrics-server on the host, bound to the bridge address, behind a
selector-less Service and the v1beta1.metrics.k8s.io APIService, scraping the real node's kubelet only (simulated
nodes have no kubelet to scrape)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from winsuite.cluster.embedded.config import BRIDGE_IP
from winsuite.cluster.embedded.config import METRICS_SERVER_PORT
from winsuite.cluster.embedded.config import REAL_NODE_NAME

NAME = "metrics-server"
NAMESPACE = "kube-system"
API_SERVICE = "v1beta1.metrics.k8s.io"
READY_PATH = "/readyz"


def argv(binary: Path, kubeconfig: Path, pki: Path) -> list[str]:
    return [
        str(binary),
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        f"--bind-address={BRIDGE_IP}",
        f"--secure-port={METRICS_SERVER_PORT}",
        f"--tls-cert-file={pki / 'metrics-server-serving.crt'}",
        f"--tls-private-key-file={pki / 'metrics-server-serving.key'}",
        f"--kubelet-certificate-authority={pki / 'ca.crt'}",
        "--kubelet-preferred-address-types=InternalIP",
        "--kubelet-use-node-status-port",
        f"--node-selector=kubernetes.io/hostname={REAL_NODE_NAME}",
        "--metric-resolution=15s",
    ]


def ready_url() -> str:
    return f"https://{BRIDGE_IP}:{METRICS_SERVER_PORT}{READY_PATH}"


def service() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {"k8s-app": NAME}},
        "spec": {"ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": METRICS_SERVER_PORT}]},
    }


def endpoints() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {"k8s-app": NAME}},
        "subsets": [{"addresses": [{"ip": BRIDGE_IP}],
                     "ports": [{"name": "https", "port": METRICS_SERVER_PORT, "protocol": "TCP"}]}],
    }


def api_service(ca_bundle: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": API_SERVICE, "labels": {"k8s-app": NAME}},
        "spec": {"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100,
                 "versionPriority": 100, "caBundle": ca_bundle,
                 "service": {"name": NAME, "namespace": NAMESPACE, "port": 443}},
    }
