"""Which certificates and kubeconfigs a cluster gets (who each component authenticates as)."""

from __future__ import annotations

from winsuite.cluster.embedded import kubeconfig
from winsuite.cluster.embedded import pki
from winsuite.cluster.embedded.config import BRIDGE_IP
from winsuite.cluster.embedded.config import REAL_NODE_NAME
from winsuite.cluster.embedded.pki import CertSpec
from winsuite.cluster.embedded.pki import client_cert
from winsuite.cluster.embedded.pki import serving_cert
from winsuite.cluster.embedded.state import Layout

MASTERS = "system:masters"
FRONT_PROXY_CLIENT = "front-proxy-client"


def specs(real_node: bool) -> list[CertSpec]:
    """Component identities are the users the default RBAC bindings expect (as kubeadm issues them)."""
    certs = [
        pki.apiserver_cert(extra_ips=(BRIDGE_IP,) if real_node else ()),
        client_cert("admin", "admin", MASTERS),
        client_cert("apiserver-kubelet-client", "kube-apiserver-kubelet-client", MASTERS),
        client_cert("kube-controller-manager", "system:kube-controller-manager"),
        client_cert("kube-scheduler", "system:kube-scheduler"),
        serving_cert("kube-controller-manager-serving"),
        serving_cert("kube-scheduler-serving"),
        serving_cert("kwok-serving"),
        # The API server's identity towards aggregated APIs (metrics-server), as --requestheader-allowed-names.
        client_cert(FRONT_PROXY_CLIENT, FRONT_PROXY_CLIENT),
    ]
    if real_node:
        certs += [
            client_cert("kubelet", f"system:node:{REAL_NODE_NAME}", "system:nodes"),
            serving_cert("kubelet-serving", ips=(BRIDGE_IP,)),
            client_cert("kube-proxy", "system:kube-proxy"),
            # The aggregator checks an APIService's backend by its Service's name, not the address it dials.
            serving_cert("metrics-server-serving", ips=(BRIDGE_IP,), dns=("metrics-server.kube-system.svc",)),
        ]
    return certs


def clients(real_node: bool) -> list[str]:
    """Components with a kubeconfig of their own besides admin (kwok and CoreDNS use admin's)."""
    return ["kube-controller-manager", "kube-scheduler"] + (["kubelet", "kube-proxy"] if real_node else [])


def write(layout: Layout, server: str, real_node: bool) -> None:
    pki.ensure(layout.pki, layout.name, specs(real_node))
    kubeconfig.write(layout.kubeconfig, layout.name, server, layout.pki, "admin")
    for client in clients(real_node):
        kubeconfig.write(layout.config / f"{client}.kubeconfig", layout.name, server, layout.pki, client)
