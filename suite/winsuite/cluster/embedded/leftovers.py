"""What a stopped cluster must not leave behind, checked on the host itself (used by `down` and tests)."""

from __future__ import annotations

import ipaddress
import os
import urllib.parse
from pathlib import Path

from winsuite.cluster.embedded.config import BRIDGE
from winsuite.cluster.embedded.config import BRIDGE_IP
from winsuite.cluster.embedded.config import KUBELET_PORT
from winsuite.cluster.embedded.config import LOOPBACK
from winsuite.cluster.embedded.config import METRICS_SERVER_PORT
from winsuite.cluster.embedded.realnode import hostdirs
from winsuite.cluster.embedded.realnode import iptables
from winsuite.cluster.embedded.realnode import network
from winsuite.cluster.embedded.realnode import nodelogs
from winsuite.cluster.embedded.state import ClusterState
from winsuite.cluster.embedded.state import Layout
from winsuite.components.processes import alive
from winsuite.components.processes import pids_with_argument

LISTEN_TABLES = ("tcp", "tcp6", "udp", "udp6")
TCP_LISTEN = "0A"
UDP_UNCONNECTED = "07"


def _decode_address(hex_address: str) -> tuple[str, int]:
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    # /proc/net stores addresses as 32-bit words in host (little-endian) order.
    ordered = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(ordered)), int(port, 16)


def _socket_owners() -> dict[str, set[int]]:
    """socket inode -> pids holding it."""
    owners: dict[str, set[int]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            links = [os.readlink(fd) for fd in (proc / "fd").iterdir()]
        except OSError:
            continue
        for link in links:
            if link.startswith("socket:["):
                owners.setdefault(link[8:-1], set()).add(int(proc.name))
    return owners


def listeners() -> dict[tuple[str, int], set[int]]:
    """(address, port) of every listening TCP and bound UDP socket on the host -> the pids holding it."""
    owners = _socket_owners()
    found: dict[tuple[str, int], set[int]] = {}
    for table in LISTEN_TABLES:
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] in (TCP_LISTEN, UDP_UNCONNECTED):
                found.setdefault(_decode_address(fields[1]), set()).update(owners.get(fields[9], set()))
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _our_ports(state: ClusterState) -> dict[tuple[str, int], str]:
    """Where this cluster's components listened: (address, port) -> component."""
    apiserver_host = urllib.parse.urlsplit(state.server).hostname or LOOPBACK
    ports = {(LOOPBACK, port): name for name, port in state.ports.items() if name != "kube-apiserver"}
    ports[(apiserver_host, state.ports["kube-apiserver"])] = "kube-apiserver"
    if state.real_node:
        ports |= {(BRIDGE_IP, KUBELET_PORT): "kubelet", (BRIDGE_IP, 53): "coredns",
                  (BRIDGE_IP, METRICS_SERVER_PORT): "metrics-server"}
    return ports


def _mounts_under(root: Path) -> list[str]:
    points = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    return [point for point in points if point.startswith(str(root))]


def _kubepods_cgroups() -> list[str]:
    return [str(path) for path in Path("/sys/fs/cgroup").glob("*/kubepods")]


def after_down(layout: Layout, state: ClusterState) -> list[str]:
    """Everything of `state`'s cluster still present on the host (empty when the teardown was complete)."""
    found = [f"process {proc.name} (pid {proc.pid}) still runs" for proc in state.processes if alive(proc)]
    # Paths under the root, with the separator: cluster "winsuite" is not "winsuite-test".
    found += [f"process {pid} still refers to {layout.root}" for pid in pids_with_argument(f"{layout.root}{os.sep}")]
    # A port is ours only if the process holding it belongs to this cluster (another may reuse it).
    open_ports = listeners()
    for (address, port), name in sorted(_our_ports(state).items()):
        holders = [pid for pid in open_ports.get((address, port), ()) if f"{layout.root}{os.sep}" in _cmdline(pid)]
        found += [f"port {address}:{port} ({name}) still held by pid {pid}" for pid in holders]
    found += [f"still mounted: {point}" for point in _mounts_under(layout.root)]
    before = state.real_node
    if before is None:
        return found
    if Path(f"/sys/class/net/{BRIDGE}").exists():
        found.append(f"bridge {BRIDGE} still exists")
    chains = {key: names for key, names in iptables.new_chains(before.chains_before).items() if names}
    found += [f"iptables chains left in {key}: {', '.join(names)}" for key, names in chains.items()]
    found += [
        f"network namespace {name} left" for name in network.netns_names() if name not in before.netns_before
    ]
    found += [f"directory {path} left" for path in hostdirs.existing() if path not in before.dirs_before]
    found += [f"cgroup {path} left" for path in _kubepods_cgroups()]
    found += [f"node log link {path} left" for path in nodelogs.left(layout.log)]
    return found
