"""The real node's host network: the pod bridge, its CNI config, sysctls and mount propagation."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from winsuite.cluster.embedded.config import BRIDGE
from winsuite.cluster.embedded.config import BRIDGE_IP
from winsuite.cluster.embedded.config import NODE_POD_CIDR
from winsuite.cluster.embedded.config import POD_RANGE_END
from winsuite.cluster.embedded.realnode import iptables

# Set for the pod network: routing between pods and Service VIPs on the bridge, and conntrack of bridged
# replies (br_netfilter). Restored on `down`, together with those kubelet and kube-proxy may change.
SYSCTLS_SET = {"net.ipv4.ip_forward": "1", "net.bridge.bridge-nf-call-iptables": "1"}
SYSCTLS_RESTORED = (
    *SYSCTLS_SET,
    "vm.overcommit_memory",
    "vm.panic_on_oom",
    "kernel.panic",
    "kernel.panic_on_oops",
    "kernel.keys.root_maxkeys",
    "kernel.keys.root_maxbytes",
    "net.ipv4.conf.all.route_localnet",
)
NETNS_DIR = Path("/run/netns")
POD_NETNS_PREFIX = "cni-"
PREFIX_LENGTH = NODE_POD_CIDR.split("/")[1]


def _sysctl_path(name: str) -> Path:
    return Path("/proc/sys") / name.replace(".", "/")


def read_sysctls() -> dict[str, str]:
    values = {}
    for name in SYSCTLS_RESTORED:
        try:
            values[name] = _sysctl_path(name).read_text().strip()
        except OSError:
            continue
    return values


def write_sysctls(values: dict[str, str]) -> None:
    for name, value in values.items():
        try:
            _sysctl_path(name).write_text(value)
        except OSError:
            continue  # absent on this kernel (e.g. br_netfilter not built in): nothing to set or restore


def conflist(ipam_dir: Path) -> dict[str, Any]:
    """CNI config: the pre-created bridge, host-local addresses kept under the cluster dir, portmap."""
    return {
        "cniVersion": "1.0.0",
        "name": "winsuite",
        "plugins": [
            {
                "type": "bridge",
                "bridge": BRIDGE,
                "isGateway": True,
                "ipMasq": False,  # pods talk to the node and to each other; nothing is NATed off the machine
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "ranges": [[{"subnet": NODE_POD_CIDR, "gateway": BRIDGE_IP, "rangeEnd": POD_RANGE_END}]],
                    "routes": [{"dst": "0.0.0.0/0"}],
                    "dataDir": str(ipam_dir),
                },
            },
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ],
    }


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def create_bridge() -> None:
    _ip("link", "add", BRIDGE, "type", "bridge")
    _ip("addr", "add", f"{BRIDGE_IP}/{PREFIX_LENGTH}", "dev", BRIDGE)
    _ip("link", "set", BRIDGE, "up")


def delete_bridge() -> None:
    if Path(f"/sys/class/net/{BRIDGE}").exists():
        _ip("link", "del", BRIDGE)


def make_root_shared() -> None:
    """Volume mounts made by kubelet must propagate into containers; the root mount here is private."""
    subprocess.run(["mount", "--make-rshared", "/"], check=True, capture_output=True)


def netns_names() -> list[str]:
    """The pods' network namespaces on the host: containerd's CRI plugin names each `cni-<uuid>`. The others
    under /run/netns (podman's `netns-<uuid>` of a kind node, `ip netns add`'s) are never the embedded cluster's,
    though made while it runs: its teardown must leave them."""
    if not NETNS_DIR.is_dir():
        return []
    return sorted(path.name for path in NETNS_DIR.iterdir() if path.name.startswith(POD_NETNS_PREFIX))


def setup() -> None:
    """Everything the node's network needs before the API server binds the bridge address."""
    write_sysctls(SYSCTLS_SET)
    make_root_shared()
    create_bridge()
    iptables.add_egress_guard(BRIDGE)
