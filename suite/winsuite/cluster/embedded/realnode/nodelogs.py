"""The real node's component logs, where the kubelet's node log query looks for a service that does not log to
journald: /var/log/<service>.log. They are hard links to the cluster's own log files (the query refuses symbolic
links that leave /var/log), made at start and removed at teardown."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

NODE_LOG_DIR = Path("/var/log")
SERVICES = ("kubelet", "containerd", "kube-proxy")


def offered_path(service: str) -> Path:
    return NODE_LOG_DIR / f"{service}.log"


def offer(log_of: Callable[[str], Path]) -> list[str]:
    """Link each service's log into /var/log; what could not be offered, and why."""
    problems = []
    for service in SERVICES:
        source, target = log_of(service), offered_path(service)
        if target.exists() or target.is_symlink():
            if not _same(source, target):
                problems.append(f"{target} exists and is not this cluster's: the node log query reads that one")
            continue
        try:
            source.touch(exist_ok=True)
            os.link(source, target)
        except OSError as err:
            problems.append(f"cannot link {source} to {target}: {err.strerror}")
    return problems


def withdraw(log_of: Callable[[str], Path]) -> None:
    """Remove the links this cluster made (a file of the same name that is not its own is left alone)."""
    for service in SERVICES:
        target = offered_path(service)
        if _same(log_of(service), target):
            target.unlink()


def left(log_of: Callable[[str], Path]) -> list[str]:
    return [str(offered_path(s)) for s in SERVICES if _same(log_of(s), offered_path(s))]


def _same(source: Path, target: Path) -> bool:
    try:
        return target.is_file() and source.is_file() and os.path.samefile(source, target)
    except OSError:
        return False
