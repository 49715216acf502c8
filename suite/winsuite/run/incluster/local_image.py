"""winsuite's image on a cluster winsuite made: made here (image.py) and imported into the containerd of the embedded
cluster's real node or of the kind cluster's node."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from winsuite.cluster.kubectl import pinned_kubectl
from winsuite.cluster.local.realnode.containerd import Containerd
from winsuite.cluster.local.realnode.containerd import image_names
from winsuite.cluster.local.realnode.containerd import import_images
from winsuite.cluster.local.state import Layout
from winsuite.errors import UsageError
from winsuite.inputs.pins import load_pins
from winsuite.run.engines.upstream_toolchain import resolve
from winsuite.run.incluster.image import build


def binaries(report: Callable[[str], None]) -> dict[str, Path]:
    """The pinned e2e.test and its ginkgo (built into the cache when missing), and the pinned kubectl."""
    toolchain = resolve(None, load_pins().kubernetes, report)
    kubectl = pinned_kubectl()
    if kubectl is None:
        raise UsageError("no pinned kubectl for the image: run `winsuite cluster build`")
    return {"e2e.test": toolchain.e2e_test, "ginkgo": toolchain.ginkgo, "kubectl": kubectl}


def build_image(report: Callable[[str], None]) -> tuple[str, Path]:
    return build(binaries(report), report)


def ensure_on_embedded_node(cluster: str, report: Callable[[str], None]) -> str:
    """The image's reference, imported into the named embedded cluster's real node unless it is there already."""
    node = Containerd(Layout(cluster).node / "containerd")
    if not node.socket.exists():
        raise UsageError(f"the embedded cluster {cluster!r} has no real node running (no {node.socket}); "
                         "start it with `winsuite cluster up`")
    ref, archive = build_image(report)
    if ref not in image_names(node):
        report(f"importing {ref} into the real node's containerd")
        import_images(node, [archive])
    return ref


def ensure_on_kind_node(cluster: str, report: Callable[[str], None]) -> str:
    """The image's reference, imported into the named kind cluster's node unless it is there already."""
    from winsuite.cluster.kind import engine as engines
    from winsuite.cluster.kind import node
    from winsuite.cluster.kind.paths import KindLayout

    engine, container = engines.choose(), KindLayout(cluster).node
    if node.state(engine, container) != "running":
        raise UsageError(f"the kind cluster {cluster!r} has no node running ({container}); start it with "
                         f"`winsuite cluster up --type kind --name {cluster}`")
    ref, archive = build_image(report)
    if ref not in node.image_names(engine, container):
        report(f"importing {ref} into {container}")
        node.import_archives(engine, container, [archive], report)
    return ref
