"""One run's configuration: the job (file < environment < flags) resolved into policy, images and placement."""

from __future__ import annotations

import dataclasses
import os
import secrets
import time
from collections.abc import Mapping
from typing import Any

from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.targeting import Placement
from winsuite.inputs.images import ImageCatalog
from winsuite.inputs.images import RepoList
from winsuite.inputs.images import load_image_catalog
from winsuite.inputs.images import load_repo_list
from winsuite.inputs.jobs import JobSpec
from winsuite.inputs.jobs import resolve_job
from winsuite.policy.exclusions import ScopeFacts
from winsuite.policy.exclusions import load_exclusions
from winsuite.policy.selection import Policy
from winsuite.policy.selection import Selector

PHASES = ("all", "parallel", "serial")


def new_run_id() -> str:
    """Short, sortable and unique enough to label a run's namespaces."""
    return time.strftime("%Y%m%d%H%M%S", time.gmtime()) + "-" + secrets.token_hex(2)


@dataclasses.dataclass(frozen=True)
class RunConfig:
    job: JobSpec
    policy: Policy
    images: ImageCatalog
    repo_list: RepoList
    placement: Placement
    run_id: str
    phase: str = "all"

    @property
    def target_os(self) -> str:
        return self.job.node_os

    def with_facts(self, facts: ClusterFacts) -> RunConfig:
        """The same run once discovery knows the cluster (scoped exclusions can then apply)."""
        scope = dataclasses.replace(ScopeFacts.of_cluster(facts), cni=self.job.cni)
        return dataclasses.replace(self, policy=dataclasses.replace(self.policy, facts=scope))


def build_run_config(
    job_ref: str | None,
    flags: Mapping[str, Any],
    *,
    environ: Mapping[str, str] | None = None,
    run_id: str | None = None,
    phase: str = "all",
) -> RunConfig:
    job = resolve_job(job_ref, os.environ if environ is None else environ, flags)
    images = load_image_catalog()
    repo_list = load_repo_list(job.repo_list, images) if job.repo_list else images.default_repo_list()
    policy = Policy(
        selector=Selector(job.focus, job.skip),
        target_os=job.node_os,
        exclusions=load_exclusions(job.exclusions),
        facts=ScopeFacts(cni=job.cni),
        run_excluded=job.run_excluded,
        label_filter=job.label_filter,
    )
    placement = Placement(
        target_os=job.node_os, windows_taint=job.windows_taint, runtime_class=job.runtime_class
    )
    return RunConfig(job, policy, images, repo_list, placement, run_id or new_run_id(), phase)
