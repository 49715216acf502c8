"""Cluster DNS: CoreDNS on the host, bound to the bridge address, behind a selector-less kube-dns Service.

On the host rather than as a pod: it needs no image, answers before any pod exists, cannot be evicted or
deleted by tests that clean namespaces, and its log sits with the other components'. Pods reach it through
the Service VIP 10.96.0.10, as they would reach a CoreDNS pod.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from winsuite.cluster.embedded.config import BRIDGE_IP
from winsuite.cluster.embedded.config import CLUSTER_DNS_IP
from winsuite.cluster.embedded.config import CLUSTER_DOMAIN
from winsuite.cluster.embedded.config import LOOPBACK

NAMESPACE = "kube-system"
SERVICE = "kube-dns"
PORTS = (("dns", "UDP"), ("dns-tcp", "TCP"))


def corefile(kubeconfig: Path, ports: Mapping[str, int]) -> str:
    """No `forward`: names outside the cluster domain are not resolved, so no query leaves the machine."""
    return f""".:53 {{
    bind {BRIDGE_IP}
    errors
    health {LOOPBACK}:{ports["coredns-health"]}
    ready {LOOPBACK}:{ports["coredns-ready"]}
    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{
        kubeconfig {kubeconfig}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }}
    cache 30
    loadbalance
}}
"""


def argv(coredns: Path, corefile_path: Path) -> list[str]:
    return [str(coredns), "-conf", str(corefile_path)]


def service() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": SERVICE, "namespace": NAMESPACE, "labels": {"k8s-app": SERVICE}},
        "spec": {
            "clusterIP": CLUSTER_DNS_IP,
            "ports": [
                {"name": name, "port": 53, "protocol": protocol, "targetPort": 53} for name, protocol in PORTS
            ],
        },
    }


def endpoints() -> dict[str, Any]:
    """Endpoints of the selector-less Service; the controller manager mirrors them into an EndpointSlice."""
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": SERVICE, "namespace": NAMESPACE, "labels": {"k8s-app": SERVICE}},
        "subsets": [
            {
                "addresses": [{"ip": BRIDGE_IP}],
                "ports": [{"name": name, "port": 53, "protocol": protocol} for name, protocol in PORTS],
            }
        ],
    }
