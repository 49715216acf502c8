"""Where a cluster's files live, and the record of what `cluster up` started (read back by down/status)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from winsuite.components.processes import Process
from winsuite.paths import cache_dir


@dataclasses.dataclass(frozen=True)
class Layout:
    """The directory of one named cluster (certificates, data, logs, the real node's runtime state)."""

    name: str

    @property
    def root(self) -> Path:
        return cache_dir() / "clusters" / self.name

    @property
    def pki(self) -> Path:
        return self.root / "pki"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def config(self) -> Path:
        return self.root / "config"

    @property
    def node(self) -> Path:
        """The real node's directories (containerd, kubelet, CNI state)."""
        return self.root / "node"

    @property
    def kubeconfig(self) -> Path:
        return self.root / "admin.kubeconfig"

    @property
    def state_file(self) -> Path:
        return self.root / "state.json"

    @property
    def lock(self) -> Path:
        """Serialises up/down of this name across processes (outside the directory `down` removes)."""
        return self.root.parent / f".{self.name}.lock"

    def log(self, component: str) -> Path:
        return self.logs / f"{component}.log"


@dataclasses.dataclass
class RealNodeState:
    """What the real node changed on the host, so `down` can undo exactly that."""

    node_name: str
    chains_before: dict[str, list[str]]  # "iptables:nat" -> KUBE-* chains present before up
    netns_before: list[str]
    sysctls_before: dict[str, str]
    dirs_before: list[str]  # host directories (realnode/hostdirs.py) that existed before up


@dataclasses.dataclass
class ClusterState:
    name: str
    server: str  # https://host:port of the API server
    ports: dict[str, int]
    bins: dict[str, str]  # artifact name -> path the components were started from
    nodes: list[str]  # every node up waits for
    real_node: RealNodeState | None = None
    real_node_reason: str = ""  # why there is no real node
    processes: list[Process] = dataclasses.field(default_factory=list)

    def process(self, name: str) -> Process | None:
        return next((proc for proc in self.processes if proc.name == name), None)


def save(layout: Layout, state: ClusterState) -> None:
    partial = layout.state_file.with_suffix(".tmp")
    partial.write_text(json.dumps(dataclasses.asdict(state), indent=2))
    os.replace(partial, layout.state_file)


def load(layout: Layout) -> ClusterState | None:
    try:
        raw: dict[str, Any] = json.loads(layout.state_file.read_text())
    except (OSError, ValueError):
        return None
    real = raw.pop("real_node")
    processes = [Process(**proc) for proc in raw.pop("processes")]
    return ClusterState(**raw, real_node=RealNodeState(**real) if real else None, processes=processes)
