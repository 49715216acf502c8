"""The embedded cluster: a control plane built from the Go module proxy, kwok nodes, one real Linux node."""

from __future__ import annotations

from suite.cluster.local.target import LocalCluster

__all__ = ["LocalCluster"]
