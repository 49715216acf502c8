"""The small protocol every cluster target implements, and the registry of targets."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class ClusterTarget(Protocol):
    """A cluster winsuite can run against. Creating one is idempotent and logs its lifecycle."""

    name: str

    def connect(self) -> None:
        """Create or start the cluster if this target manages it, otherwise check it is reachable."""

    def wait_ready(self, timeout: float) -> None:
        """Block until the API server answers and the nodes are Ready, or raise with the last state seen."""

    def kubeconfig_path(self) -> Path:
        """A kubeconfig file whose current context points at this cluster."""

    def collect_logs(self, dest: Path) -> None:
        """Copy component logs (for a managed cluster) into dest; called before teardown."""

    def close(self) -> None:
        """Stop what this target started (nothing for an external cluster)."""

    def describe(self) -> str:
        """One line: what this is and where it lives."""
