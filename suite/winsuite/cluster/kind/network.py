"""The network winsuite's kind nodes join under podman: a bridge of its own, no NAT, no firewall rules on the host.

podman's `network create` writes a CNI list with ipMasq, firewall and portmap plugins, all of which add rules to the
host's iptables (and the embedded cluster relies on the host's FORWARD policy staying ACCEPT). So the list is
written here with one bridge plugin, and the bridge is made by winsuite with the host's address on it: the host
reaches each node's API server on the node's address, and nothing is forwarded or masqueraded.
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
from pathlib import Path
from typing import Any

from winsuite.cluster.kind.engine import NETWORK
from winsuite.cluster.kind.engine import podman_network_dir

BRIDGE = "winsuite-kind0"
SUBNET = ipaddress.ip_network("10.89.250.0/24")  # away from podman's 10.88/16 and the embedded cluster's 10.244/16
HOST_ADDRESS = next(SUBNET.hosts())  # the bridge's address: the host's side of the network


def conflist() -> dict[str, Any]:
    return {
        "cniVersion": "0.4.0",
        "name": NETWORK,
        "plugins": [{
            "type": "bridge",
            "bridge": BRIDGE,
            "isGateway": False,  # true would also turn on the host's ip_forward
            "ipMasq": False,
            "hairpinMode": True,
            "ipam": {
                "type": "host-local",
                "ranges": [[{"subnet": str(SUBNET), "gateway": str(HOST_ADDRESS)}]],
                "routes": [{"dst": "0.0.0.0/0"}],
            },
        }],
    }


def conflist_path() -> Path:
    return podman_network_dir() / f"{NETWORK}.conflist"


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def bridge_exists() -> bool:
    return Path(f"/sys/class/net/{BRIDGE}").exists()


def ensure() -> None:
    """The network's CNI list and its bridge, with the host's address (idempotent)."""
    text = json.dumps(conflist(), indent=2)
    if not conflist_path().exists() or conflist_path().read_text() != text:
        conflist_path().parent.mkdir(parents=True, exist_ok=True)
        conflist_path().write_text(text)
    if not bridge_exists():
        _ip("link", "add", BRIDGE, "type", "bridge")
    address = f"{HOST_ADDRESS}/{SUBNET.prefixlen}"
    if address not in _ip("-o", "addr", "show", "dev", BRIDGE).stdout:
        _ip("addr", "add", address, "dev", BRIDGE)
    _ip("link", "set", BRIDGE, "up")


def remove() -> list[str]:
    """Remove the bridge, the CNI list and the addresses handed out; returns what could not be removed."""
    problems = []
    if bridge_exists():
        done = _ip("link", "del", BRIDGE, check=False)
        if done.returncode != 0:
            problems.append(f"bridge {BRIDGE} could not be removed: {done.stderr.strip()}")
    conflist_path().unlink(missing_ok=True)
    # host-local's record of the addresses it gave out (CNI's default data directory).
    leases = Path("/var/lib/cni/networks") / NETWORK
    if leases.is_dir():
        for lease in leases.iterdir():
            lease.unlink()
        leases.rmdir()
    return problems
