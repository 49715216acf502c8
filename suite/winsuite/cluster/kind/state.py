"""The record of a kind cluster winsuite made: what `down` must undo and what `status` and `wait_ready` check."""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

from winsuite.cluster.kind.paths import KindLayout


@dataclasses.dataclass
class KindState:
    name: str
    engine: str  # podman or docker
    image: str
    server: str = ""  # https://node-address:6443, once the cluster serves
    nodes: list[str] = dataclasses.field(default_factory=list)  # every node wait_ready waits for
    container_id: str = ""  # the node container's id: its mounts and processes are found by it after `down`
    netns: str = ""  # the node's network namespace on the host (podman)
    made_lib_modules: bool = False  # /lib/modules did not exist (podman refuses a missing bind source)


def save(layout: KindLayout, state: KindState) -> None:
    layout.root.mkdir(parents=True, exist_ok=True)
    partial = layout.root / "state.json.tmp"
    partial.write_text(json.dumps(dataclasses.asdict(state), indent=2))
    os.replace(partial, layout.root / "state.json")


def load(layout: KindLayout) -> KindState | None:
    try:
        raw: dict[str, Any] = json.loads((layout.root / "state.json").read_text())
    except (OSError, ValueError):
        return None
    return KindState(**raw)
