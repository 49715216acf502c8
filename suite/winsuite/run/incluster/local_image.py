"""winsuite's image on a cluster winsuite made: made here (image.py) and imported into the node of the embedded or
kind cluster (cluster.node_images)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from winsuite.cluster.kubectl import pinned_kubectl
from winsuite.cluster.node_images import node_images
from winsuite.errors import UsageError
from winsuite.inputs.cluster_spec import ClusterType
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


def ensure_on_node(cluster_type: ClusterType, cluster: str, report: Callable[[str], None]) -> str:
    """The image's reference, imported into the named made cluster's node unless it is there already."""
    node = node_images(cluster_type, cluster)
    ref, archive = build_image(report)
    if ref not in node.names():
        report(f"importing {ref} into {node.where}")
        node.import_archive(archive, report)
    return ref
