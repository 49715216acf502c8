"""What winsuite does inside a kind node's container: its address, its images, its units."""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Iterable
from pathlib import Path

from winsuite.cluster.kind.engine import ContainerEngine
from winsuite.cluster.kind.engine import choose
from winsuite.cluster.kind.paths import KindLayout
from winsuite.components.progress import Reporter
from winsuite.errors import UsageError

CTR = ("ctr", "--namespace=k8s.io")


def state(engine: ContainerEngine, container: str) -> str | None:
    """The container's state (running, exited, …), None when there is no such container."""
    done = engine.run(["inspect", "--type", "container", "--format", "{{.State.Status}}", container], check=False)
    return done.stdout.decode().strip() if done.returncode == 0 else None


def address(engine: ContainerEngine, container: str) -> str:
    """The node's IPv4 address on its network (the host reaches its API server there)."""
    raw = engine.output(["inspect", "--type", "container", "--format", "{{json .NetworkSettings.Networks}}",
                         container])
    networks = json.loads(raw or "{}") or {}
    found = [str(net["IPAddress"]) for net in networks.values() if net.get("IPAddress")]
    if not found:
        raise UsageError(f"kind node {container} has no IPv4 address ({engine.name} inspect: {raw.strip()[:200]})")
    return found[0]


def execute(engine: ContainerEngine, container: str, *argv: str, stdin: Path | None = None,
            timeout: float = 300) -> str:
    flags = ["-i"] if stdin is not None else []
    return engine.run(["exec", *flags, container, *argv], stdin=stdin, timeout=timeout).stdout.decode()


def start_unit(engine: ContainerEngine, container: str, unit: str) -> None:
    execute(engine, container, "systemctl", "start", unit)


def image_names(engine: ContainerEngine, container: str) -> set[str]:
    return set(execute(engine, container, *CTR, "images", "list", "--quiet").split())


def import_archives(engine: ContainerEngine, container: str, archives: Iterable[Path], report: Reporter) -> None:
    """Import OCI archives into the node's containerd (an image it has already is imported again, unchanged)."""
    for archive in archives:
        report(f"  importing {archive.name} into {container}")
        execute(engine, container, *CTR, "images", "import", "--all-platforms", "-", stdin=archive,
                timeout=600)


class KindNodeImages:
    """The named kind cluster's node and its containerd's images (cluster.node_images)."""

    def __init__(self, cluster: str) -> None:
        self.engine, self.where = choose(), KindLayout(cluster).node
        if state(self.engine, self.where) != "running":
            raise UsageError(f"the kind cluster {cluster!r} has no node running ({self.where}); start it with "
                             f"`winsuite cluster up --type kind --name {cluster}`")

    def names(self) -> set[str]:
        return image_names(self.engine, self.where)

    def import_archive(self, archive: Path, report: Callable[[str], None]) -> None:
        import_archives(self.engine, self.where, [archive], report)
