"""The resolved run: one typed, versioned document (job, selection, placement, images, engines, shard, output) that
`winsuite run` decides once, writes into its build as `artifacts/run.json`, and hands whole to every process.

Resolution (job file < environment < flags) happens once, in the process that was given the flags; pytest phases,
xdist workers and shard pods load the document and never read a job file, an exclusion list or a repo list again.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import secrets
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.targeting import NodeOS
from winsuite.authoring.targeting import Placement
from winsuite.errors import DataError
from winsuite.given_paths import unwritable
from winsuite.inputs import document_codec
from winsuite.inputs.engines import EngineChoice
from winsuite.inputs.images import ImageCatalog
from winsuite.inputs.images import RepoList
from winsuite.inputs.images import load_image_catalog
from winsuite.inputs.images import load_repo_list
from winsuite.inputs.jobs import JobSpec
from winsuite.inputs.jobs import apply_overrides
from winsuite.inputs.jobs import resolve_job
from winsuite.inputs.run_modes import NodeLogMode
from winsuite.inputs.run_modes import Phase
from winsuite.paths import CASES_PACKAGE
from winsuite.policy.cluster_job import named_for_cluster
from winsuite.policy.exclusions import Exclusion
from winsuite.policy.exclusions import ScopeFacts
from winsuite.policy.exclusions import load_exclusions
from winsuite.policy.selection import Policy
from winsuite.policy.selection import Selector
from winsuite.policy.selection import exact_focus
from winsuite.policy.shards import Shard
from winsuite.policy.shards import ShardRef
from winsuite_reports.conventions import BUILD_LOG
from winsuite_reports.conventions import artifacts_dir

API_VERSION = "winsuite.io/v1alpha1"
KIND = "Run"
RUN_FILE = "run.json"  # under the build's artifacts/


def new_run_id() -> str:
    """Short, sortable and unique enough to label a run's namespaces."""
    return time.strftime("%Y%m%d%H%M%S", time.gmtime()) + "-" + secrets.token_hex(2)


@dataclasses.dataclass(frozen=True)
class Output:
    """Where one run's results go: the build directory in the prow layout and its parts."""

    build_dir: Path
    build_id: str
    job_dir: Path | None = None  # set when the build sits in <root>/<job>/<build> (latest-build.txt, dashboard)
    results: Path | None = None  # where JUnit and diagnostics go, when not the build's artifacts/ (plain pytest)

    @property
    def artifacts(self) -> Path:
        return self.results or artifacts_dir(self.build_dir)

    @property
    def build_log(self) -> Path:
        return self.build_dir / BUILD_LOG

    @property
    def diagnostics_dir(self) -> Path:
        """Where failed tests' diagnostics go (linked from their rows, relative to the build directory)."""
        return self.artifacts

    @property
    def cluster_logs_dir(self) -> Path:
        return self.artifacts / "cluster"

    @property
    def run_file(self) -> Path:
        return self.artifacts / RUN_FILE

    def create(self) -> None:
        """The build's directories; a place that cannot hold them is the user's to fix, said in one line."""
        try:
            self.artifacts.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise unwritable("results", err.filename or self.artifacts, err) from None


@dataclasses.dataclass(frozen=True)
class Narrowing:
    """The run's selection narrowed to exactly these tests (a shard, a rerun, ops-readiness cases); skips still
    apply. Data, so every process narrows the same way."""

    names: tuple[str, ...]
    why: str


@dataclasses.dataclass(frozen=True)
class RunConfig:
    job: JobSpec
    exclusions: tuple[Exclusion, ...]
    images: ImageCatalog
    repo_list: RepoList
    run_id: str
    output: Output | None = None  # None for what only selects (`winsuite list`, `images`)
    narrowing: Narrowing | None = None
    facts: ClusterFacts | None = None  # the cluster as discovered (scoped exclusions apply with it)
    shard: ShardRef | None = None  # --shard I/N: the run is one shard of its selection
    shard_plan: tuple[Shard, ...] | None = None  # --shard-plan: the shards every shard of the run was cut by
    cases: str = CASES_PACKAGE  # the package of winsuite tests
    node_logs: NodeLogMode = NodeLogMode.ON_FAILURE
    pytest_args: tuple[str, ...] = ()  # given after `--`
    metadata: dict[str, Any] = dataclasses.field(default_factory=dict)  # more of started.json (e.g. rerun-of)
    phase: Phase = Phase.ALL

    @property
    def target_os(self) -> NodeOS:
        return self.job.node_os

    @property
    def with_upstream(self) -> bool:
        """Whether upstream specs join the run: always beside winsuite's own catalog (unless the job is native only);
        a package of other tests (--cases) runs alone unless the run asks for both engines, whose ports are then
        cross-checked with their upstream twins."""
        if self.job.engine == EngineChoice.NATIVE:
            return False
        return self.cases == CASES_PACKAGE or self.job.engine == EngineChoice.BOTH

    @functools.cached_property
    def policy(self) -> Policy:
        """What decides each test's fate: the job's focus (or the narrowing), skips, labels and exclusions."""
        job = self.job
        focus = (exact_focus(list(self.narrowing.names)),) if self.narrowing is not None else job.focus
        scope = dataclasses.replace(ScopeFacts.of_cluster(self.facts) if self.facts else ScopeFacts(), cni=job.cni)
        return Policy(selector=Selector(focus, job.skip), target_os=job.node_os, exclusions=self.exclusions,
                      facts=scope, run_excluded=job.run_excluded, label_filter=job.label_filter)

    @functools.cached_property
    def placement(self) -> Placement:
        job = self.job
        return Placement(target_os=job.node_os, windows_taint=job.windows_taint, runtime_class=job.runtime_class)

    @property
    def layout(self) -> Output:
        if self.output is None:
            raise ValueError("this run has no output directory")
        return self.output

    def with_facts(self, facts: ClusterFacts) -> RunConfig:
        """The same run once discovery knows the cluster (scoped exclusions can then apply)."""
        return dataclasses.replace(self, facts=facts)

    def narrowed(self, names: list[str], why: str) -> RunConfig:
        return dataclasses.replace(self, narrowing=Narrowing(tuple(names), why))

    # -- the document ----------------------------------------------------------------------------------
    def to_document(self) -> dict[str, Any]:
        return {"apiVersion": API_VERSION, "kind": KIND, **document_codec.encode(self)}

    @staticmethod
    def from_document(raw: Any, source: str) -> RunConfig:
        if not isinstance(raw, dict) or raw.get("apiVersion") != API_VERSION or raw.get("kind") != KIND:
            raise DataError(source, "apiVersion/kind", f"expected a run document (apiVersion: {API_VERSION}, "
                                                       f"kind: {KIND}) written by this version of winsuite")
        fields = {k: v for k, v in raw.items() if k not in ("apiVersion", "kind")}
        try:
            run: RunConfig = document_codec.decode(RunConfig, fields)
        except document_codec.DocumentError as err:
            raise DataError(source, err.field, err.problem) from None
        return run

    def save(self, path: Path) -> None:
        """Written whole or not at all: a process that loads it never sees half a document."""
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps(self.to_document(), indent=1) + "\n", encoding="utf-8")
        os.replace(partial, path)

    @staticmethod
    def load(path: Path) -> RunConfig:
        from winsuite_reports.prow import MalformedJson
        from winsuite_reports.prow import read_json_object

        try:
            raw = read_json_object(path)
        except OSError as err:
            raise DataError(path, "", f"cannot read the run document: {err.strerror or err}") from None
        except MalformedJson as err:
            raise DataError(path, "", f"not a run document: {err}") from None
        return RunConfig.from_document(raw, str(path))


def resolve_run(
    job_ref: str | None,
    flags: Mapping[str, Any],
    *,
    environ: Mapping[str, str] | None = None,
    run_id: str | None = None,
) -> RunConfig:
    """The run a job file, the environment and flags describe (in that order of precedence), with the content of
    every file they name read now: the one place a job, its exclusion lists and its repo list are read. Without a
    job file, the default job of the cluster they target (named after it when the user brought it)."""
    environ = os.environ if environ is None else environ
    job = named_for_cluster(resolve_job(job_ref, environ, flags), environ)
    return with_inputs_of(job, run_id or new_run_id())


def with_inputs_of(job: JobSpec, run_id: str, base: RunConfig | None = None) -> RunConfig:
    """A run of `job`: its exclusion lists and repo list read, unless `base` already holds the same ones."""
    images = base.images if base is not None else load_image_catalog()
    if base is not None and base.job.exclusions == job.exclusions:
        exclusions = base.exclusions
    else:
        exclusions = load_exclusions(job.exclusions)
    if base is not None and base.job.repo_list == job.repo_list:
        repo_list = base.repo_list
    else:
        repo_list = load_repo_list(job.repo_list, images) if job.repo_list else images.default_repo_list()
    return RunConfig(job, exclusions, images, repo_list, run_id)


def with_flags(run: RunConfig, flags: Mapping[str, Any], run_id: str) -> RunConfig:
    """A stored run with flags given now over its job (a rerun): files named anew are read, the others kept."""
    return with_inputs_of(apply_overrides(run.job, flags), run_id, base=run)
