"""Host directories that containerd, CNI and kubelet create outside the cluster's own directory."""

from __future__ import annotations

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
    kept and reported: this never deletes data recursively.
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
        else:
            path.rmdir()
    return kept
