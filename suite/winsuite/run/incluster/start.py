"""Starting a run inside the cluster: its image, its shards, its objects; then following it, or `--detach`."""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from pathlib import Path

from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.targeting import NodeOS
from winsuite.cluster.connect import connect
from winsuite.errors import ExitCode
from winsuite.errors import NothingSelected
from winsuite.errors import UsageError
from winsuite.inputs.cluster_spec import MADE_CLUSTER_TYPES
from winsuite.inputs.cluster_spec import ClusterSpec
from winsuite.inputs.cluster_spec import ClusterType
from winsuite.inputs.engines import Engine
from winsuite.inputs.run_modes import NodeLogMode
from winsuite.k8s import run_leases
from winsuite.policy.catalog import collect
from winsuite.policy.catalog import engine_catalog
from winsuite.policy.run_config import RUN_FILE
from winsuite.policy.run_config import RunConfig
from winsuite.policy.shard_selection import sharded_tests
from winsuite.policy.shards import Shard
from winsuite.policy.shards import cut_shards
from winsuite.results import durations
from winsuite.results.prow import BuildResult
from winsuite.run.console import Console
from winsuite.run.engines.upstream import UpstreamEngine
from winsuite.run.finisher import Finisher
from winsuite.run.finisher import run_error
from winsuite.run.finisher import run_metadata
from winsuite.run.incluster import objects
from winsuite.run.incluster.in_cluster_run import InClusterRun
from winsuite.run.incluster.state import InClusterState
from winsuite.run.session import open_session
from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import artifacts_dir

LOCAL_IMAGE_PULL = "Never"  # the locally made image is imported into the node, never pulled
DEADLINE_MARGIN = 600  # seconds the Job may outlive the run timeout (start-up, sending results)


def start(run: RunConfig, *, image: str | None, shards: int | None, detach: bool) -> int:
    if run.job.cluster.type == ClusterType.IN_CLUSTER:
        raise UsageError("--in-cluster starts the run's pods from outside the cluster; leave out --in-cluster-config")
    output = run.layout
    console = Console()
    try:
        session = open_session(run, console)
        nodes = [n.name for n in session.facts.nodes if n.os == NodeOS.LINUX and n.runs_containers]
        if not nodes:
            raise UsageError("--in-cluster needs a Linux node that runs containers for the shard pods (found none)")
        reference, pull = _image(image, run)
        output.create()
        state, planned = _plan(session.run, session.facts, shards or 1, image=reference)
    except BaseException:
        if output.job_dir is not None:  # a build directory made for this run (never --artifacts): nothing ran
            shutil.rmtree(output.build_dir, ignore_errors=True)
        raise
    run = session.run
    connection = session.connection
    names = objects.RunObjects(run.run_id)
    job = objects.job_manifest(names, shards=len(state.shards), image=reference, nodes=nodes, pull_policy=pull,
                               deadline_seconds=int(run.job.run_timeout) + DEADLINE_MARGIN)
    in_cluster = InClusterRun(run, state, connection)
    # Signals are held from the first file on: one that arrives while the run's objects are made stops the Job once
    # it exists, and the run ends with its results as a run here does.
    with in_cluster.supervisor:
        metadata = {**run_metadata(run), "in-cluster": in_cluster.metadata}
        in_cluster.build.start(state.started, metadata)
        run.save(output.run_file)
        state.save(output.build_dir)
        run_leases.register(connection.api, run.run_id, run.job.run_timeout + DEADLINE_MARGIN)
        try:
            objects.create(connection.api, names, {RUN_FILE: json.dumps(for_pods(run, planned).to_document())}, job)
        except Exception as err:  # no Job: the run ends here, its build saying why, as a run here that cannot start
            objects.delete(connection.api, names)
            run_leases.withdraw(connection.api, run.run_id)
            in_cluster.console.open_log(output.build_log)
            error, code = run_error(err, in_cluster.console, output.build_log)
            return int(Finisher(run, in_cluster.console, in_cluster.supervisor, in_cluster.build).finish(
                connection=connection, facts=session.facts, metadata=metadata, result=BuildResult.FAILURE,
                error=error, error_code=code))
        sizes = ", ".join(str(len(tests)) for tests in state.shards)
        console.say(f"winsuite run {run.run_id}: {len(state.shards)} shard(s) of {sizes} test(s) as Job "
                    f"{names.namespace}/{objects.JOB_NAME} on {', '.join(nodes)}, image {reference}")
        if detach and not in_cluster.supervisor.abort_reason:
            console.say(f"detached; follow it and collect its results with: winsuite attach {output.build_dir}")
            return int(ExitCode.OK)
        return int(in_cluster.follow_supervised())


def attach(build_dir: Path) -> int:
    """Take over a detached run: follow its shards from their first line, then finish it as `run` would."""
    state = InClusterState.load(build_dir)
    if (build_dir / FINISHED).is_file():
        raise UsageError(f"{build_dir}: this run has finished already (its {FINISHED} is written)")
    run = RunConfig.load(artifacts_dir(build_dir) / RUN_FILE)
    connection = connect(run.job.cluster, start_embedded=False)
    names = objects.RunObjects(run.run_id)
    if not objects.job_exists(connection.api, names):
        raise UsageError(f"{build_dir}: the run's Job {names.namespace}/{objects.JOB_NAME} is not in the cluster "
                         "(deleted, or the cluster was replaced); its results are lost")
    print(f"attached to run {run.run_id} ({len(state.shards)} shard(s), namespace {names.namespace})", flush=True)
    return int(InClusterRun(run, state, connection).follow())


def _image(image: str | None, run: RunConfig) -> tuple[str, str]:
    """The image the shard pods run, and its pull policy: --image, else the one made here for the embedded
    cluster's real node or the kind node."""
    if image:
        return image, "IfNotPresent"
    if run.job.cluster.type not in MADE_CLUSTER_TYPES:
        raise UsageError("--in-cluster needs --image REF on a cluster winsuite did not make: an image of winsuite "
                         "built from its Containerfile and pushed to a registry the cluster pulls from")
    from winsuite.run.incluster import local_image

    ref = local_image.ensure_on_node(run.job.cluster.type, run.job.cluster.name, lambda text: print(text, flush=True))
    return ref, LOCAL_IMAGE_PULL


def _plan(run: RunConfig, facts: ClusterFacts, count: int, *, image: str) -> tuple[InClusterState, list[Shard]]:
    names: list[str] = []
    if run.with_upstream:
        with run.layout.build_log.open("a", encoding="utf-8") as log:
            names = UpstreamEngine(run, run.layout.artifacts, log, print).names(facts.server_version)
    catalog = engine_catalog(collect(run.cases), names, run.job.engine)
    planned = sharded_tests(run, catalog)
    if not planned:
        raise NothingSelected("no tests selected: nothing to run in the cluster")
    shards = cut_shards(planned, min(count, len(planned)), durations.for_planning(run.layout.job_dir,
                                                                             durations.key_of(run)))
    return InClusterState(
        image=image, shards=tuple(s.tests for s in shards), serial=tuple(t.name for t in planned if t.serial),
        upstream=tuple(sorted({t.name for t in catalog if t.engine is Engine.UPSTREAM})), started=time.time(),
        expected=tuple(round(s.expected, 1) for s in shards)), shards


def for_pods(run: RunConfig, shards: list[Shard]) -> RunConfig:
    """The run as its shard pods get it: in the cluster, with its shard plan; what only this machine has (its paths,
    the facts it discovered from outside) left out."""
    job = dataclasses.replace(run.job, cluster=ClusterSpec(ClusterType.IN_CLUSTER), artifacts=None, e2e_test=None)
    return dataclasses.replace(run, job=job, facts=None, shard_plan=tuple(shards), node_logs=NodeLogMode.NEVER)
