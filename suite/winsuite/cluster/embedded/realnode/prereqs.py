"""Whether this machine can run the real node, and the one command that installs what it lacks."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from winsuite.cluster.embedded.config import BRIDGE
from winsuite.components import images

# Debian packages of the real node; gcc and libc6-dev compile the upstream pause binary and busybox.
DEBIAN_PACKAGES = (
    "containerd",
    "runc",
    "containernetworking-plugins",
    "iptables",
    "conntrack",
    "make",  # builds the test images' busybox from its source
    "curl",  # copied with its libraries into the agnhost image, as upstream's carries it
    "iproute2",
    "gcc",
    "libc6-dev",
)
# The kind target's: its container engine, and what makes its node image's root file system.
KIND_PACKAGES = ("podman", "debootstrap")
CNI_BIN_DIR = Path("/usr/lib/cni")
CNI_PLUGINS = ("bridge", "host-local", "loopback", "portmap")
TOOLS = ("containerd", "ctr", "runc", "iptables", "ip6tables", "conntrack", "ip", "mount", "umount")


def install_command() -> list[str]:
    return ["apt-get", "install", "-y", "--no-install-recommends", *DEBIAN_PACKAGES, *KIND_PACKAGES]


def _cgroups_ok() -> bool:
    return Path("/sys/fs/cgroup/memory").is_dir() or "memory" in _read("/sys/fs/cgroup/cgroup.controllers")


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def missing_packages() -> list[str]:
    """What of the real node's host software is absent (tools, CNI plugins, the images' files)."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    missing += [f"CNI plugin {plugin}" for plugin in CNI_PLUGINS if not (CNI_BIN_DIR / plugin).exists()]
    missing += [str(path) for path in images.host_files() if not path.exists()]
    return missing


def unavailable_reason(need_gcc: bool) -> str:
    """'' when the real node can run here, else one line saying why not and what would fix it."""
    if os.geteuid() != 0:
        return "needs root (containerd, kubelet, a bridge and iptables rules)"
    if not _cgroups_ok():
        return "needs the cgroup memory controller (mounted under /sys/fs/cgroup)"
    missing = missing_packages() + (["gcc"] if need_gcc and shutil.which("gcc") is None else [])
    if missing:
        command = " ".join(install_command())
        return f"missing {', '.join(missing)}: run `winsuite cluster deps --install` ({command})"
    if Path(f"/sys/class/net/{BRIDGE}").exists():
        return f"network interface {BRIDGE} exists already (another cluster's real node? take that one down)"
    return ""
