"""A resolved job written back as a job file (what a run inside the cluster hands its shard pods).

The job's settings as they stand after the environment and flags, with the files it names (repo list, exclusion
lists) given new names, since the pods read them from a ConfigMap, not from this machine's paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from winsuite.inputs.jobs import API_VERSION
from winsuite.inputs.jobs import KIND
from winsuite.inputs.jobs import JobSpec


def _seconds(value: float) -> str:
    return f"{round(value)}s"


def job_document(job: JobSpec, cluster: Mapping[str, Any], files: Mapping[str, str]) -> dict[str, Any]:
    """The job file of `job` with `cluster` as its cluster block; `files` maps each local path it names to the name
    the reader finds it under. Fields that only make sense on this machine (artifacts, e2eTest) are left out."""
    doc: dict[str, Any] = {
        "apiVersion": API_VERSION, "kind": KIND, "name": job.name, "description": job.description,
        "dashboard": job.dashboard, "tab": job.tab_name, "releaseBlocking": job.release_blocking,
        "cluster": dict(cluster), "nodeOS": str(job.node_os), "focus": list(job.focus), "skip": list(job.skip),
        "parallelism": job.parallelism, "flakeAttempts": job.flake_attempts,
        "timeouts": {"test": _seconds(job.test_timeout), "run": _seconds(job.run_timeout)},
        "runExcluded": job.run_excluded, "engine": str(job.engine), "prepull": job.prepull,
    }
    if job.interval is not None:
        doc["interval"] = _seconds(job.interval)
    if job.repo_list:
        doc["repoList"] = files.get(job.repo_list, job.repo_list)
    if job.exclusions:
        doc["exclusions"] = [files[path] for path in job.exclusions]
    if job.label_filter:
        doc["labelFilter"] = job.label_filter
    if job.cni:
        doc["cni"] = job.cni
    placement: dict[str, Any] = {"windowsTaint": None}
    if job.windows_taint is not None:
        taint = job.windows_taint
        placement["windowsTaint"] = {"key": taint.key, "value": taint.value, "effect": taint.effect}
    if job.runtime_class:
        placement["runtimeClassName"] = job.runtime_class
    doc["placement"] = placement
    return doc
