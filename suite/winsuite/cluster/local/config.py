"""What an embedded cluster is made of: its nodes and the fixed addresses of its network."""

from __future__ import annotations

import dataclasses

SERVICE_CIDR = "10.96.0.0/16"
KUBERNETES_SERVICE_IP = "10.96.0.1"
CLUSTER_DNS_IP = "10.96.0.10"
CLUSTER_DOMAIN = "cluster.local"
CLUSTER_CIDR = "10.244.0.0/16"
# The real node's pods live on a bridge the cluster creates; the node IP is the bridge address, so node,
# pods and Services all use addresses of this run and nothing needs a route off the machine.
BRIDGE = "cni0"
NODE_POD_CIDR = "10.244.0.0/24"
BRIDGE_IP = "10.244.0.1"
# Pods get addresses up to POD_RANGE_END; LoadBalancer Services get the rest of the bridge's subnet, put on the
# bridge by the cluster's LoadBalancer controller (the node answers for them, kube-proxy forwards them).
POD_RANGE_END = "10.244.0.239"
LOAD_BALANCER_RANGE = ("10.244.0.240", "10.244.0.254")
# Pod IPs kwok reports for pods on simulated nodes (nothing is configured with them).
SIMULATED_POD_CIDR = "10.0.0.0/16"
LOOPBACK = "127.0.0.1"

DEFAULT_WINDOWS_BUILDS = ("10.0.17763", "10.0.20348")
REAL_NODE_NAME = "linux-0"

# Default ports; one already in use is replaced by a free one (see ports.py).
DEFAULT_PORTS = {
    "etcd-client": 2379,
    "etcd-peer": 2380,
    "kube-apiserver": 6443,
    "kube-controller-manager": 10257,
    "kube-scheduler": 10259,
    "kwok": 10247,
}
REAL_NODE_PORTS = {
    "kubelet-healthz": 10248,
    "kube-proxy-metrics": 10249,
    "kube-proxy-healthz": 10256,
    "coredns-health": 10254,
    "coredns-ready": 10253,
}
KUBELET_PORT = 10250  # on the bridge address, which only this cluster uses
METRICS_SERVER_PORT = 4443  # likewise (the aggregated metrics API's backend)


@dataclasses.dataclass(frozen=True)
class ClusterConfig:
    """Node counts and kinds; the defaults are the documented embedded cluster."""

    windows_builds: tuple[str, ...] = DEFAULT_WINDOWS_BUILDS
    linux_simulated: int = 1
    real_node: bool | None = None  # None: on where the machine allows it
