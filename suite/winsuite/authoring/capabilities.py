"""What a test can need from the cluster, in words the skip reasons use."""

from __future__ import annotations

import enum


class Capability(enum.Enum):
    """A cluster capability; discovery decides which ones the cluster has for the target OS."""

    NODES = "a schedulable node of the target OS (simulated nodes count: scheduling and admission only)"
    WINDOWS_NODES = "Ready Windows nodes (simulated nodes count: scheduling and admission only)"
    RUNS_CONTAINERS = "a node that runs {os} containers"
    EXEC = "exec into containers on a node that runs {os} containers"
    LOGS = "container logs from a node that runs {os} containers"
    PORT_FORWARD = "port-forward to a node that runs {os} containers"
    CLUSTER_DNS = "cluster DNS (a kube-dns Service with ready endpoints)"
    SERVICES = "Service virtual IPs (kube-proxy or equivalent) on a node that runs {os} containers"
    NODE_PORTS = "NodePort Services reachable on node IPs"
    STATS_SUMMARY = "kubelet /stats/summary through the node proxy"
    KUBELET_CONFIGZ = "kubelet /configz through the node proxy"
    MIXED_WINDOWS_BUILDS = "Windows nodes of at least two Windows builds"
    LINUX_AND_WINDOWS_CONTAINERS = "nodes that run Linux containers and nodes that run Windows containers"
    WINDOWS_KERNEL = "a node that runs Windows containers"
    HOSTPROCESS = "Windows HostProcess containers (containerd >= 1.7)"
    HYPERV = "the Hyper-V RuntimeClass runhcs-wcow-hypervisor"
    ACTIVE_DIRECTORY = "an Active Directory domain with a GMSA-labelled Windows node"
    GPU = "a Windows node with a DirectX GPU device plugin"
    LOAD_BALANCER = "a LoadBalancer implementation that assigns ingress IPs"
    METRICS_API = "the resource metrics API (metrics.k8s.io)"
    EXTERNAL_NETWORK = "outbound Internet access from pods"

    def describe(self, target_os: str) -> str:
        """The requirement as a phrase, e.g. 'a node that runs Windows containers'."""
        return self.value.format(os=target_os.capitalize())


def requirement_text(capability: Capability, target_os: str, found: str) -> str:
    """The skip reason: 'requires X (found: Y)'."""
    return f"requires {capability.describe(target_os)} (found: {found})"
