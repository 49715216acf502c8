"""Where winsuite keeps what belongs to kind: the engine's configuration, node image parts, and each cluster's files."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from winsuite.paths import cache_dir


def kind_dir() -> Path:
    return cache_dir() / "kind"


@dataclasses.dataclass(frozen=True)
class KindLayout:
    """The files of one kind cluster winsuite made (the cluster itself lives in the container engine)."""

    name: str

    @property
    def root(self) -> Path:
        return kind_dir() / "clusters" / self.name

    @property
    def kubeconfig(self) -> Path:
        return self.root / "admin.kubeconfig"

    @property
    def ca(self) -> Path:
        """The cluster's CA certificate (from its kubeconfig), to check its API server's health endpoint."""
        return self.root / "ca.crt"

    @property
    def config(self) -> Path:
        """The kind cluster configuration `kind create cluster --config` was given."""
        return self.root / "kind-config.yaml"

    @property
    def lock(self) -> Path:
        """Serialises up/down of this name across processes (outside the directory `down` removes)."""
        return self.root.parent / f".{self.name}.lock"

    @property
    def node(self) -> str:
        """The container of the cluster's one node (kind names it after the cluster)."""
        return f"{self.name}-control-plane"
