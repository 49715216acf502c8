"""The real node is machine-wide (bridge, Service VIPs, iptables): one cluster at a time may own it.

The owner is recorded in a file under /run (gone after a reboot), written under a lock so two clusters
starting at once cannot both take it; a record whose cluster directory is gone is stale.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from winsuite.cluster.embedded.state import Layout
from winsuite.components.locks import file_lock

CLAIM_DIR = Path("/run/winsuite")
CLAIM = CLAIM_DIR / "real-node.json"
LOCK = CLAIM_DIR / "real-node.lock"


def _owner() -> dict[str, str] | None:
    try:
        owner: dict[str, str] = json.loads(CLAIM.read_text())
    except (OSError, ValueError):
        return None
    return owner if Path(owner["root"]).is_dir() else None


def acquire(layout: Layout) -> str:
    """'' when this cluster now owns the real node, else the one-line reason it cannot."""
    with file_lock(LOCK):
        owner = _owner()
        if owner is not None and owner["root"] != str(layout.root):
            return f"the real node belongs to cluster {owner['name']} ({owner['root']}); take it down first"
        partial = CLAIM.with_suffix(".tmp")
        partial.write_text(json.dumps({"name": layout.name, "root": str(layout.root)}))
        os.replace(partial, CLAIM)
    return ""


def release(layout: Layout) -> None:
    with file_lock(LOCK):
        try:
            owner = json.loads(CLAIM.read_text())
        except (OSError, ValueError):
            return
        if owner.get("root") == str(layout.root):
            CLAIM.unlink()
