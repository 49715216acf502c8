"""kube-proxy in iptables mode for the real node (Service VIPs, including cluster DNS)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from winsuite.cluster.embedded.config import CLUSTER_CIDR
from winsuite.cluster.embedded.config import LOOPBACK
from winsuite.cluster.embedded.config import NODE_POD_CIDR


def render_config(kubeconfig: Path, node_name: str, ports: Mapping[str, int]) -> dict[str, Any]:
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "mode": "iptables",
        "clusterCIDR": CLUSTER_CIDR,
        "hostnameOverride": node_name,
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "oomScoreAdj": 0,  # CAP_SYS_RESOURCE is dropped here: the default -999 cannot be set
        # 0 = leave the host's conntrack table size and timeouts alone.
        "conntrack": {"maxPerCore": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
        "metricsBindAddress": f"{LOOPBACK}:{ports['kube-proxy-metrics']}",
        "healthzBindAddress": f"{LOOPBACK}:{ports['kube-proxy-healthz']}",
        "nodePortAddresses": [NODE_POD_CIDR],  # NodePorts only on the node (bridge) address, never on eth0
    }


def argv(kube_proxy: Path, config: Path) -> list[str]:
    return [str(kube_proxy), f"--config={config}", "--v=2"]


def cleanup_argv(kube_proxy: Path) -> list[str]:
    return [str(kube_proxy), "--cleanup"]
