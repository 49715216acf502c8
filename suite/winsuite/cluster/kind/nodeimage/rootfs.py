"""The node's operating system: a Debian root file system made by debootstrap, cached by release and packages."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from winsuite.cluster.kind.paths import kind_dir
from winsuite.components.debian import mirror
from winsuite.components.locks import file_lock
from winsuite.components.progress import Reporter
from winsuite.components.progress import run_step
from winsuite.errors import UsageError

# What kind's base image installs (images/base/Dockerfile), less what a single-node offline cluster never uses
# (nfs-common, open-iscsi, fuse-overlayfs, curl), plus runc (kind builds its own) and dbus (systemd's bus).
PACKAGES = (
    "systemd", "systemd-sysv", "dbus", "conntrack", "iptables", "nftables", "iproute2", "ethtool", "util-linux",
    "mount", "kmod", "libseccomp2", "pigz", "e2fsprogs", "bash", "ca-certificates", "jq", "procps", "socat",
    "ebtables", "runc",
)
# Left out of the image: what the container engine provides, and apt's downloaded indexes.
DROPPED = ("dev/", "proc/", "sys/", "var/lib/apt/lists/", "var/cache/apt/")


def rootfs_dir(release: str) -> Path:
    key = hashlib.sha256(repr((release, PACKAGES, mirror())).encode()).hexdigest()[:12]
    return kind_dir() / "rootfs" / f"{release}-{key}"


def ensure(release: str, report: Reporter) -> Path:
    """The root file system's directory, made once (debootstrap needs root and Debian's mirror)."""
    final = rootfs_dir(release)
    if final.is_dir():
        return final
    with file_lock(final.parent / ".build.lock"):
        if final.is_dir():  # another process made it while we waited
            return final
        debootstrap = shutil.which("debootstrap")
        if debootstrap is None or os.geteuid() != 0:
            raise UsageError("the kind node image's root file system is made with debootstrap, as root: "
                             "run `winsuite cluster deps --install` as root, then build again")
        for stale in final.parent.glob(".tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)
        scratch = final.parent / f".tmp-{final.name}-{os.getpid()}"
        argv = [debootstrap, "--variant=minbase", f"--include={','.join(PACKAGES)}", release, str(scratch), mirror()]
        label = f"node root file system (debootstrap {release}, {len(PACKAGES)} packages)"
        report(f"{label} …")
        try:
            took = run_step(argv, label=label, log=kind_dir() / "logs" / "debootstrap.log", report=report)
            for dropped in ("var/lib/apt/lists", "var/cache/apt"):
                shutil.rmtree(scratch / dropped, ignore_errors=True)
            os.replace(scratch, final)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        report(f"{label}: done in {took:.0f}s")
    return final
