"""The embedded cluster: a control plane built from the Go module proxy, kwok nodes, one real Linux node."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

if TYPE_CHECKING:
    from winsuite.cluster.embedded.target import LocalCluster

__all__ = ["LocalCluster"]


def __getattr__(name: str) -> Any:
    """LocalCluster is imported on first use: it brings the kubernetes client, which `--help` does not need."""
    if name == "LocalCluster":
        from winsuite.cluster.embedded.target import LocalCluster

        return LocalCluster
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
