"""The default job of a cluster the user brings, named after that cluster: `winsuite-<cluster>-<os>` on dashboard
`winsuite-<cluster>`, tab `<cluster>-<os>`. <cluster> is the kubeconfig's context (its server's host when the context
leaves nothing a directory name can hold), or inside a pod the API server's host: two clusters' results never share
a job directory, a tab or a record of durations, and a run on Linux never shares one with a run on Windows."""

from __future__ import annotations

import dataclasses
import re
import urllib.parse
from collections.abc import Mapping

from winsuite.cluster.base import kubeconfig_of
from winsuite.cluster.kubeconfig_file import chosen_context
from winsuite.inputs.cluster_spec import MADE_CLUSTER_TYPES
from winsuite.inputs.cluster_spec import ClusterSpec
from winsuite.inputs.cluster_spec import ClusterType
from winsuite.inputs.jobs import JobChoice
from winsuite.inputs.jobs import JobSpec

IN_CLUSTER_HOST = "KUBERNETES_SERVICE_HOST"  # what the kubelet tells every pod of its API server
MAX_LABEL = 100  # characters of <cluster>: a job name is a directory name, at most 200 characters


def named_for_cluster(job: JobSpec, environ: Mapping[str, str]) -> JobSpec:
    """`job` named after its cluster when it is the default job of a cluster the user brought; else `job`."""
    if job.chosen is not JobChoice.CLUSTER_DEFAULT or job.cluster.type in MADE_CLUSTER_TYPES:
        return job
    label, target_os = cluster_label(job.cluster, environ), str(job.node_os)
    return dataclasses.replace(job, name=f"winsuite-{label}-{target_os}", dashboard=f"winsuite-{label}",
                               tab=f"{label}-{target_os}")


def cluster_label(spec: ClusterSpec, environ: Mapping[str, str]) -> str:
    """<cluster>: the context (or server host) of a kubeconfig cluster, the API server's host in a pod."""
    if spec.type == ClusterType.IN_CLUSTER:
        return path_safe(environ.get(IN_CLUSTER_HOST, "")) or "in-cluster"
    context, server = chosen_context(kubeconfig_of(spec), spec.context)
    return path_safe(context) or path_safe(urllib.parse.urlsplit(server).hostname or "") or "cluster"


def path_safe(text: str) -> str:
    """`text` as part of a job name (letters, digits, '.', '_', '-'): other characters become '-', at most
    MAX_LABEL of them, neither end a '-' or '.' ('arn:aws:eks:…:cluster/prod' → 'arn-aws-eks-…-cluster-prod')."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text)[:MAX_LABEL].strip("-.")
