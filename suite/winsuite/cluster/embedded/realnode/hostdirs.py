"""Host directories that containerd, CNI and kubelet create outside the cluster's own directory."""

from __future__ import annotations

import errno
import subprocess
from pathlib import Path

# Fixed paths these components use whatever their configuration says (shim sockets, runc state, netns
# mounts, container log links, CNI result cache, the device-plugin socket directory).
HOST_DIRS = (
    "/run/containerd",
    "/run/netns",
    "/var/log/containers",
    "/var/log/pods",
    "/var/lib/cni",
    "/var/lib/kubelet",
)


def existing() -> list[str]:
    return [path for path in HOST_DIRS if Path(path).exists()]


def remove_created(before: list[str]) -> list[str]:
    """Remove the directories that did not exist before `up`, if nothing but directories and sockets remain.

    Sockets are endpoints of processes already stopped (kubelet's device-plugin socket); any other file is
    kept and reported: this never deletes data recursively. An empty directory that is a mount point (the netns
    directory) is unmounted; one that still cannot be removed is kept and reported.
    """
    kept = []
    for path in (Path(p) for p in HOST_DIRS if p not in before):
        if not path.is_dir():
            continue
        for socket in (entry for entry in path.rglob("*") if entry.is_socket()):
            socket.unlink()
        for directory in sorted(
            (d for d in path.rglob("*") if d.is_dir()), key=lambda d: len(d.parts), reverse=True
        ):
            if not any(directory.iterdir()):
                directory.rmdir()
        if any(path.iterdir()):
            kept.append(str(path))
            continue
        for _ in range(5):
            try:
                path.rmdir()
                break
            except OSError as err:
                # /run/netns: whoever makes the first network namespace bind-mounts it on itself (each runtime
                # once), and a mount point cannot be removed; anything else is kept and said, never forced.
                if err.errno != errno.EBUSY:
                    kept.append(str(path))
                    break
                subprocess.run(["umount", str(path)], capture_output=True, check=False)
        else:
            kept.append(str(path))
    return kept
