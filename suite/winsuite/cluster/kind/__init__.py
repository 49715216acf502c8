"""The kind target: a kind cluster on a node image winsuite builds offline, plus kwok's simulated Windows nodes."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

if TYPE_CHECKING:
    from winsuite.cluster.kind.target import KindTarget

__all__ = ["KindTarget"]


def __getattr__(name: str) -> Any:
    """KindTarget is imported on first use: it brings the kubernetes client, which `--help` does not need."""
    if name == "KindTarget":
        from winsuite.cluster.kind.target import KindTarget

        return KindTarget
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
