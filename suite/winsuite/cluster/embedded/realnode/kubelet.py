"""The real node's kubelet: its configuration (cgroup v1, containerd 1.6, private dirs) and flags."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import yaml

from winsuite.cluster.embedded.config import BRIDGE_IP
from winsuite.cluster.embedded.config import CLUSTER_DNS_IP
from winsuite.cluster.embedded.config import CLUSTER_DOMAIN
from winsuite.cluster.embedded.config import KUBELET_PORT
from winsuite.cluster.embedded.config import LOOPBACK
from winsuite.cluster.embedded.config import NODE_POD_CIDR
from winsuite.cluster.embedded.realnode.containerd import NAMESPACE as CONTAINERD_NAMESPACE


@dataclasses.dataclass(frozen=True)
class KubeletPaths:
    home: Path  # <cluster>/node/kubelet
    pki: Path
    socket: Path  # containerd's

    @property
    def config(self) -> Path:
        return self.home / "config.yaml"

    @property
    def root(self) -> Path:
        return self.home / "root"

    @property
    def pod_logs(self) -> Path:
        return self.home / "pod-logs"


def render_config(paths: KubeletPaths, healthz_port: int) -> dict[str, Any]:
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        # containerd 1.6 has no RuntimeConfig RPC, so kubelet uses this driver; there is no systemd here.
        "cgroupDriver": "cgroupfs",
        "failCgroupV1": False,  # kubelet >= 1.35 refuses cgroup v1 unless told otherwise
        "failSwapOn": False,
        "containerRuntimeEndpoint": f"unix://{paths.socket}",
        "address": BRIDGE_IP,
        "port": KUBELET_PORT,
        "readOnlyPort": 0,
        "healthzBindAddress": LOOPBACK,
        "healthzPort": healthz_port,
        "tlsCertFile": str(paths.pki / "kubelet-serving.crt"),
        "tlsPrivateKeyFile": str(paths.pki / "kubelet-serving.key"),
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": True},
            "x509": {"clientCAFile": str(paths.pki / "ca.crt")},
        },
        "authorization": {"mode": "Webhook"},
        "clusterDomain": CLUSTER_DOMAIN,
        "clusterDNS": [CLUSTER_DNS_IP],
        "podCIDR": NODE_POD_CIDR,
        "podLogsDir": str(paths.pod_logs),
        # Images are imported by hand and cannot be pulled again: never garbage-collect them.
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%"},
        "serializeImagePulls": False,
        "protectKernelDefaults": False,
        # The node log query (/api/v1/nodes/<node>/proxy/logs/?query=kubelet) that node logs are collected with.
        "enableSystemLogHandler": True,
        "enableSystemLogQuery": True,
    }


def write_config(paths: KubeletPaths, healthz_port: int) -> None:
    paths.home.mkdir(parents=True, exist_ok=True)
    paths.config.write_text(yaml.safe_dump(render_config(paths, healthz_port), sort_keys=False))


def argv(kubelet: Path, paths: KubeletPaths, kubeconfig: Path, node_name: str) -> list[str]:
    return [
        str(kubelet),
        f"--config={paths.config}",
        f"--kubeconfig={kubeconfig}",
        f"--hostname-override={node_name}",
        f"--node-ip={BRIDGE_IP}",
        f"--root-dir={paths.root}",
        f"--cert-dir={paths.home / 'pki'}",
        # cAdvisor (inside the kubelet) reads container stats from containerd on its own default socket,
        # /run/containerd/containerd.sock, not from containerRuntimeEndpoint: without these two flags it sees the
        # pods' cgroups but no container, and every container's CPU and memory in the stats summary is 0.
        f"--containerd={paths.socket}",
        f"--containerd-namespace={CONTAINERD_NAMESPACE}",
        "--v=2",
    ]
