"""What a shard pod runs: its shard of the run (the run document the run mounted), its rows streamed as they finish,
then its whole build, all through its log (protocol.py), which is the one channel a pod always has."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

from winsuite.errors import UsageError
from winsuite.inputs.run_modes import NodeLogMode
from winsuite.policy.run_config import RUN_FILE
from winsuite.policy.run_config import Output
from winsuite.policy.run_config import RunConfig
from winsuite.policy.shards import ShardRef
from winsuite.run.incluster import protocol

INDEX_ENV = "JOB_COMPLETION_INDEX"  # set by the Job controller for an Indexed Job's pods


def shard_run(config: Path, results: Path, index: int) -> RunConfig:
    """Shard index+1 of the mounted run: its own run id and build directory; node logs are the run's to collect."""
    run = RunConfig.load(config / RUN_FILE)
    if run.shard_plan is None or not 0 <= index < len(run.shard_plan):
        raise UsageError(f"{config / RUN_FILE}: no shard {index + 1} in the run's shard plan")
    number = index + 1
    return dataclasses.replace(
        run, shard=ShardRef(number, len(run.shard_plan)), run_id=f"{run.run_id}-{number}",
        output=Output(results / f"shard-{number}", run.layout.build_id), node_logs=NodeLogMode.NEVER)


def stream_run(run: RunConfig) -> int:
    """The shard's run: each row written to stdout as it finishes, then the whole build."""
    from winsuite.run.runner import Runner

    emit = protocol.emitter(sys.stdout)
    runner = Runner(run, on_row=lambda phase, attempt, final: emit(protocol.row(phase, attempt, final)))
    code = int(runner.run_build())
    sys.stdout.flush()
    for message in protocol.build_messages(run.layout.build_dir, code):
        emit(message)
    return code


def completion_index() -> int:
    index = os.environ.get(INDEX_ENV, "")
    if not index.isdigit():
        raise UsageError(f"shard-worker runs in a pod of an Indexed Job (${INDEX_ENV} is {index!r})")
    return int(index)


