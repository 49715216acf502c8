"""Starting a run inside the cluster: its image, its shard plan, its objects; then following it, or `--detach`."""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import yaml

from winsuite.cluster.connect import Connection
from winsuite.cluster.connect import connect
from winsuite.errors import ExitCode
from winsuite.errors import NothingSelected
from winsuite.errors import UsageError
from winsuite.k8s import run_leases
from winsuite.plugin.session import open_session
from winsuite.policy.catalog import DEFAULT_PACKAGE
from winsuite.policy.catalog import Engine
from winsuite.policy.catalog import collect
from winsuite.policy.catalog import engine_catalog
from winsuite.policy.job_document import job_document
from winsuite.policy.run_config import RunConfig
from winsuite.policy.shard_selection import planned_tests
from winsuite.policy.shards import Shard
from winsuite.policy.shards import plan_document
from winsuite.policy.shards import plan_shards
from winsuite.run.engines.upstream import UpstreamEngine
from winsuite.run.incluster import objects
from winsuite.run.incluster.controller import InClusterRun
from winsuite.run.incluster.state import InClusterState
from winsuite.run.incluster.worker import JOB_FILE
from winsuite.run.incluster.worker import PLAN_FILE
from winsuite.run.incluster.worker import SETTINGS
from winsuite.run.results import durations
from winsuite.run.results import prow
from winsuite.run.runner import Runner
from winsuite_reports.conventions import BUILD_LOG
from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import artifacts_dir

LOCAL_IMAGE_PULL = "Never"  # the locally made image is imported into the node, never pulled
DEADLINE_MARGIN = 600  # seconds the Job may outlive the run timeout (start-up, sending results)


def start(args: argparse.Namespace) -> int:
    runner = Runner.from_args(args)  # the run's configuration and build directory, as a local run has them
    config, layout = runner.run_config, runner.layout
    try:
        if config.job.cluster.type == "in-cluster":
            raise UsageError("--in-cluster starts the run's pods from outside the cluster; leave out "
                             "--in-cluster-config")
        session = open_session(config)
        nodes = [n.name for n in session.facts.nodes if n.os == "linux" and n.runs_containers]
        if not nodes:
            raise UsageError("--in-cluster needs a Linux node that runs containers for the shard pods (found none)")
        image, pull = _image(args, config)
        layout.artifacts.mkdir(parents=True, exist_ok=True)
        state, shards = _plan(args, session.run, layout.build_dir, layout.job_dir, session.connection, image)
    except BaseException:
        if layout.job_dir is not None:  # a build directory made for this run (never --artifacts): nothing ran
            shutil.rmtree(layout.build_dir, ignore_errors=True)
        raise
    connection = session.connection
    run = objects.RunObjects(state.run_id)
    settings = {"shards": len(shards), "runId": state.run_id, "cases": args.cases, "buildId": layout.build_id}
    files = _files(session.run, shards, settings)
    job = objects.job_manifest(run, shards=len(state.shards), image=image, nodes=nodes, pull_policy=pull,
                               deadline_seconds=int(state.run_timeout) + DEADLINE_MARGIN)
    prow.write_started(layout.build_dir, state.started, {
        "job": config.job.name, "run-id": state.run_id, "node-os": config.job.node_os,
        "in-cluster": {"namespace": run.namespace, "image": image, "shards": len(state.shards)}})
    state.save(layout.build_dir)
    run_leases.register(connection.api, state.run_id, state.run_timeout + DEADLINE_MARGIN)
    try:
        objects.create(connection.api, run, files, job)
    except BaseException:
        objects.delete(connection.api, run)
        run_leases.withdraw(connection.api, state.run_id)
        raise
    sizes = ", ".join(str(len(tests)) for tests in state.shards)
    print(f"winsuite run {state.run_id}: {len(state.shards)} shard(s) of {sizes} test(s) as Job "
          f"{run.namespace}/{objects.JOB_NAME} on {', '.join(nodes)}, image {image}", flush=True)
    if args.detach:
        print(f"detached; follow it and collect its results with: winsuite attach {layout.build_dir}")
        return int(ExitCode.OK)
    return int(InClusterRun(state, layout.build_dir, connection).follow())


def attach(build_dir: Path) -> int:
    """Take over a detached run: follow its shards from their first line, then finish it as `run` would."""
    state = InClusterState.load(build_dir)
    if (build_dir / FINISHED).is_file():
        raise UsageError(f"{build_dir}: this run has finished already (its {FINISHED} is written)")
    connection = connect(state.cluster, start_embedded=False)
    if not objects.job_exists(connection.api, objects.RunObjects(state.run_id)):
        raise UsageError(f"{build_dir}: the run's Job {objects.RunObjects(state.run_id).namespace}/{objects.JOB_NAME} "
                         "is not in the cluster (deleted, or the cluster was replaced); its results are lost")
    print(f"attached to run {state.run_id} ({len(state.shards)} shard(s), namespace "
          f"{objects.RunObjects(state.run_id).namespace})", flush=True)
    return int(InClusterRun(state, build_dir, connection).follow())


def _image(args: argparse.Namespace, config: RunConfig) -> tuple[str, str]:
    """The image the shard pods run, and its pull policy: --image, else the one made here for the embedded
    cluster's real node."""
    if args.image:
        return str(args.image), "IfNotPresent"
    if config.job.cluster.type not in ("embedded", "kind"):
        raise UsageError("--in-cluster needs --image REF on a cluster winsuite did not make: an image of winsuite "
                         "built from its Containerfile and pushed to a registry the cluster pulls from")
    from winsuite.run.incluster import local_image

    kind = config.job.cluster.type == "kind"
    ensure = local_image.ensure_on_kind_node if kind else local_image.ensure_on_embedded_node
    return ensure(config.job.cluster.name, lambda text: print(text, flush=True)), LOCAL_IMAGE_PULL


def _plan(args: argparse.Namespace, config: RunConfig, build_dir: Path, job_dir: Path | None, connection: Connection,
          image: str) -> tuple[InClusterState, list[Shard]]:
    names: list[str] = []
    if args.cases == DEFAULT_PACKAGE and config.job.engine != "native":
        with (build_dir / BUILD_LOG).open("a", encoding="utf-8") as log:
            names = UpstreamEngine(config, artifacts_dir(build_dir), log, print).names(connection.server_version)
    catalog = engine_catalog(collect(args.cases), names, config.job.engine)
    planned = planned_tests(config, catalog)
    if not planned:
        raise NothingSelected("no tests selected: nothing to run in the cluster")
    count = min(args.shards or 1, len(planned))
    shards = plan_shards(planned, count, durations.for_planning(job_dir))
    return InClusterState(
        run_id=config.run_id, job=config.job.name, image=image, cluster=config.job.cluster,
        shards=[list(s.tests) for s in shards], serial=[t.name for t in planned if t.serial],
        upstream=sorted({t.name for t in catalog if t.engine is Engine.UPSTREAM}), started=time.time(),
        run_timeout=config.job.run_timeout, job_dir=str(job_dir) if job_dir else None,
        expected=[round(s.expected, 1) for s in shards],
        node_logs=getattr(args, "collect_node_logs", None) or "on-failure"), shards


def _files(config: RunConfig, shards: list[Shard], settings: dict[str, object]) -> dict[str, str]:
    """The ConfigMap: the job as a file (its lists beside it), the shard plan and the run's settings."""
    job = config.job
    files: dict[str, str] = {}
    names: dict[str, str] = {}
    if job.repo_list and not job.repo_list.startswith(("http://", "https://")):
        names[job.repo_list] = "repo-list.yaml"
        files["repo-list.yaml"] = Path(job.repo_list).read_text()
    for index, path in enumerate(job.exclusions):
        names[path] = f"exclusions-{index}.yaml"
        files[names[path]] = Path(path).read_text()
    files[JOB_FILE] = yaml.safe_dump(job_document(job, {"type": "in-cluster"}, names), sort_keys=False)
    files[PLAN_FILE] = json.dumps(plan_document(job.name, shards))
    files[SETTINGS] = json.dumps(settings)
    return files
