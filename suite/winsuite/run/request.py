"""What `winsuite run` was asked for, resolved once into the run document: from the flags, the environment and the
job file, or from the stored run of the build `--rerun-failed` runs again; with its output, shard and options."""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path
from typing import Any

from winsuite.errors import UsageError
from winsuite.given_paths import unwritable
from winsuite.inputs.jobs import JobChoice
from winsuite.inputs.jobs import JobSpec
from winsuite.inputs.jobs import overrides_from_env
from winsuite.inputs.run_modes import NodeLogMode
from winsuite.paths import CASES_PACKAGE
from winsuite.paths import RESULTS_ROOT
from winsuite.policy import options
from winsuite.policy.run_config import Output
from winsuite.policy.run_config import RunConfig
from winsuite.policy.run_config import new_run_id
from winsuite.policy.run_config import resolve_run
from winsuite.policy.run_config import with_flags
from winsuite.policy.shard_selection import load_shards_for
from winsuite.policy.shards import ShardRef
from winsuite.results import prow
from winsuite.run.rerun import Rerun


def flags_of(args: argparse.Namespace) -> dict[str, Any]:
    """The job fields the command line sets (run options and `winsuite run`'s own)."""
    get = vars(args).get
    flags = options.overrides(get)
    for field in ("parallelism", "run_timeout", "artifacts"):
        if get(field) is not None:
            flags[field] = get(field)
    return flags


def resolve_request(args: argparse.Namespace, rerun: Rerun | None = None) -> RunConfig:
    """The run `winsuite run` with `args` describes; a rerun starts from the run its build recorded."""
    get = vars(args).get
    run_id = get("run_id") or new_run_id()
    results_root = Path(get("results_root") or RESULTS_ROOT)
    if rerun is None:
        run = resolve_run(options.job_ref(get), flags_of(args), environ=os.environ, run_id=run_id)
        metadata: dict[str, Any] = {}
    else:
        run = _rerun_of(rerun, args, run_id)
        metadata = rerun.metadata_entries()
        results_root = (rerun.results_root() or results_root) if not run.job.artifacts else results_root
    shard = ShardRef.parse(args.shard) if get("shard") else None
    plan_file = get("shard_plan")
    return dataclasses.replace(
        run, output=output_of(run.job, results_root, get("build_id")), shard=shard,
        shard_plan=tuple(load_shards_for(shard, Path(plan_file))) if shard and plan_file else None,
        cases=str(get("cases")) if get("cases") not in (None, CASES_PACKAGE) else run.cases,
        node_logs=NodeLogMode(get("collect_node_logs") or NodeLogMode.ON_FAILURE),
        pytest_args=tuple(get("pytest_args") or ()), metadata=metadata)


def _rerun_of(rerun: Rerun, args: argparse.Namespace, run_id: str) -> RunConfig:
    """The stored run, without what belonged to its build (output, facts, narrowing), with the environment and the
    flags given now over its job, narrowed to the tests to run again."""
    if getattr(args, "winsuite_focus", None):
        raise UsageError("--rerun-failed selects the tests to run itself; leave out --focus")
    stored = rerun.run
    # No artifacts directory: the stored one was the build it reruns.
    job = dataclasses.replace(stored.job, artifacts=None, chosen=JobChoice.RERUN)
    overrides = {**overrides_from_env(os.environ), **flags_of(args)}
    run = with_flags(dataclasses.replace(stored, job=job), overrides, run_id)
    return dataclasses.replace(run, cases=stored.cases).narrowed(rerun.names, f"rerun of build {rerun.build_id}")


def output_of(job: JobSpec, results_root: Path, build_id: str | None) -> Output:
    """The job's `artifacts` directory as the build (prow's $ARTIFACTS), else <results root>/<job>/<build id>."""
    if job.artifacts:
        build_dir = Path(job.artifacts)
        return Output(build_dir, build_id or build_dir.name, None)
    job_dir = results_root / job.name
    try:
        build = build_id or prow.new_build_id(job_dir)
    except OSError as err:
        raise unwritable("results", err.filename or job_dir, err) from None
    return Output(job_dir / build, build, job_dir)
