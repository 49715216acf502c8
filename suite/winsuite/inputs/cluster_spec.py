"""A job's `cluster:` block and the closed set of cluster types it may name."""

from __future__ import annotations

import dataclasses
import enum


class ClusterType(enum.StrEnum):
    """What kind of cluster a run targets (the job's `cluster.type`); each has a target in cluster/base.py."""

    EMBEDDED = "embedded"
    KIND = "kind"
    KUBECONFIG = "kubeconfig"
    IN_CLUSTER = "in-cluster"


# The clusters winsuite makes itself: what `--cluster-type` and WINSUITE_CLUSTER_TYPE may choose.
MADE_CLUSTER_TYPES = (ClusterType.EMBEDDED, ClusterType.KIND)


@dataclasses.dataclass(frozen=True)
class ClusterSpec:
    """A job's `cluster:` block."""

    type: ClusterType = ClusterType.EMBEDDED
    name: str = "winsuite"  # embedded or kind cluster name
    kubeconfig: str | None = None
    context: str | None = None
    real_node: bool = True  # embedded: join the real Linux node where the machine allows it
    kind_image: str | None = None  # kind: a node image to use instead of the one winsuite builds
