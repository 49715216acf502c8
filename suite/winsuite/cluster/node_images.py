"""The images on the node of a cluster winsuite made (the embedded cluster's real node, the kind node): what is
there, and importing an OCI archive into it, without a registry."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from winsuite.inputs.cluster_spec import ClusterType


class NodeImages(Protocol):
    """One made cluster's node; made only while it runs (a UsageError naming how to start it otherwise)."""

    where: str  # for progress lines: "the real node's containerd", "winsuite-control-plane"

    def names(self) -> set[str]: ...

    def import_archive(self, archive: Path, report: Callable[[str], None]) -> None: ...


def _embedded(name: str) -> NodeImages:
    from winsuite.cluster.embedded.realnode.containerd import RealNodeImages

    return RealNodeImages(name)


def _kind(name: str) -> NodeImages:
    from winsuite.cluster.kind.node import KindNodeImages

    return KindNodeImages(name)


LOADERS: dict[ClusterType, Callable[[str], NodeImages]] = {ClusterType.EMBEDDED: _embedded, ClusterType.KIND: _kind}


def node_images(cluster_type: ClusterType, name: str) -> NodeImages:
    return LOADERS[cluster_type](name)
