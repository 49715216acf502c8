"""What a deleted kind cluster must not leave behind, checked on the engine and on the host itself."""

from __future__ import annotations

from pathlib import Path

from winsuite.cluster.kind import network
from winsuite.cluster.kind.engine import NETWORK
from winsuite.cluster.kind.engine import ContainerEngine
from winsuite.cluster.kind.engine import Engine
from winsuite.cluster.kind.paths import KindLayout
from winsuite.cluster.kind.state import KindState
from winsuite.components.processes import pids_with_argument

CLUSTER_LABEL = "io.x-k8s.kind.cluster"  # kind labels its containers and volumes with the cluster's name


def _listed(engine: ContainerEngine, args: list[str]) -> list[str]:
    return engine.output(args).split()


def nodes_on_network(engine: ContainerEngine) -> list[str]:
    """Containers (of any kind cluster) still attached to winsuite's kind network."""
    return _listed(engine, ["ps", "--all", "--filter", f"network={NETWORK}", "--format", "{{.Names}}"])


def after_down(engine: ContainerEngine, layout: KindLayout, state: KindState | None) -> list[str]:
    """Everything of the cluster still present (empty when the deletion was complete)."""
    label = f"label={CLUSTER_LABEL}={layout.name}"
    found = [f"container {name} still exists" for name in
             _listed(engine, ["ps", "--all", "--filter", label, "--format", "{{.Names}}"])]
    # kind's podman provider labels the node's /var volume with the node's name as the key.
    found += [f"volume {name} still exists" for name in
              _listed(engine, ["volume", "ls", "--filter", f"label={layout.node}", "--format", "{{.Name}}"])]
    if engine.engine is Engine.PODMAN and not nodes_on_network(engine):
        found += [f"bridge {network.BRIDGE} still exists"] if network.bridge_exists() else []
        found += [f"network list {network.conflist_path()} still exists"] if network.conflist_path().exists() else []
    if state is not None and state.container_id:
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
        found += [f"still mounted: {line.split()[4]}" for line in mounts if state.container_id in line]
        found += [f"process {pid} of the node container still runs"
                  for pid in pids_with_argument(state.container_id)]
    if state is not None and state.netns and Path(state.netns).exists():
        found.append(f"network namespace {state.netns} still exists")
    return found
