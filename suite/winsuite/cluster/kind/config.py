"""The kind cluster configuration winsuite creates clusters with, and the addresses its node image is built for."""

from __future__ import annotations

from typing import Any

import yaml

# Pods and Services on addresses of their own, away from the embedded cluster's 10.244/16 and 10.96/16: the two
# clusters can run at once, and a route or a log line never leaves doubt about which one an address belongs to.
POD_SUBNET = "10.245.0.0/16"
NODE_POD_CIDR = "10.245.0.0/24"  # the controller manager gives the first node the subnet's first /24
SERVICE_SUBNET = "10.97.0.0/16"
# kind's default. (nftables mode with the root file system's nft 1.0.6 was seen to lose map elements: Services
# whose ClusterIP refused connections.)
KUBE_PROXY_MODE = "iptables"


def _patch(kind: str, api_version: str, fields: dict[str, Any]) -> str:
    return yaml.safe_dump({"apiVersion": api_version, "kind": kind, **fields}, sort_keys=False)


def cluster_config(*, dns_image_tag: str | None, cgroup_v1: bool) -> dict[str, Any]:
    """kind's Cluster document: one node, winsuite's own CNI (kindnetd is not served), and the kubelet settings
    this kind of machine needs.

    `dns_image_tag`: the CoreDNS tag a winsuite-built node image carries (kubeadm's own default is older);
    `cgroup_v1`: the host has cgroup v1, which kubelet >= 1.35 refuses unless told otherwise.
    """
    kubelet: dict[str, Any] = {"oomScoreAdj": 0}  # a negative oom_score_adj is refused where CAP_SYS_RESOURCE is not
    if cgroup_v1:
        kubelet["failCgroupV1"] = False
    patches = [
        _patch("KubeletConfiguration", "kubelet.config.k8s.io/v1beta1", kubelet),
        _patch("KubeProxyConfiguration", "kubeproxy.config.k8s.io/v1alpha1", {"oomScoreAdj": 0}),
    ]
    if dns_image_tag:
        patches.append(_patch("ClusterConfiguration", "kubeadm.k8s.io/v1beta4", {"dns": {"imageTag": dns_image_tag}}))
    return {
        "kind": "Cluster",
        "apiVersion": "kind.x-k8s.io/v1alpha4",
        "networking": {
            "disableDefaultCNI": True,
            "podSubnet": POD_SUBNET,
            "serviceSubnet": SERVICE_SUBNET,
            "kubeProxyMode": KUBE_PROXY_MODE,
        },
        "nodes": [{"role": "control-plane"}],
        "kubeadmConfigPatches": patches,
    }


def render(config: dict[str, Any]) -> str:
    return yaml.safe_dump(config, sort_keys=False)
