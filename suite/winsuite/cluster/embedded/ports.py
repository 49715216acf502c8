"""Ports for the cluster's listeners: the documented defaults, or free ones when those are taken."""

from __future__ import annotations

import socket
from collections.abc import Mapping

from winsuite.components.progress import Reporter


def is_free(host: str, port: int) -> bool:
    # SO_REUSEADDR like the Go servers that will bind it, so a port in TIME_WAIT is not reported as taken.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def _ephemeral(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def choose(host: str, wanted: Mapping[str, int], report: Reporter) -> dict[str, int]:
    """The wanted port of each listener if it is free on `host`, otherwise a free one (and say so)."""
    chosen: dict[str, int] = {}
    for name, port in wanted.items():
        if is_free(host, port) and port not in chosen.values():
            chosen[name] = port
            continue
        replacement = _ephemeral(host)
        while replacement in chosen.values():
            replacement = _ephemeral(host)
        report(f"port {host}:{port} ({name}) is in use; using {replacement} instead")
        chosen[name] = replacement
    return chosen
