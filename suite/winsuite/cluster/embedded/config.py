"""The embedded cluster's fixed addresses and ports (its nodes: `ClusterConfig` in winsuite.components.simnodes)."""

from __future__ import annotations

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
LOOPBACK = "127.0.0.1"

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
