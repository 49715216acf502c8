"""What a shard pod runs: its shard of the run (from the ConfigMap the run mounted), its rows streamed as they finish,
then its whole build, all through its log (protocol.py), which is the one channel a pod always has."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from winsuite.errors import UsageError
from winsuite.run.incluster import protocol

SETTINGS = "settings.json"  # {"shards": N, "runId": ID, "cases": PACKAGE, "buildId": ID}
JOB_FILE = "job.yaml"
PLAN_FILE = "plan.json"
INDEX_ENV = "JOB_COMPLETION_INDEX"  # set by the Job controller for an Indexed Job's pods


def run_argv(config: Path, results: Path, index: int) -> list[str]:
    """The `winsuite run` of shard index+1: the run's job and plan, its own run id and build directory."""
    settings = json.loads((config / SETTINGS).read_text())
    number, count = index + 1, int(settings["shards"])
    return ["run", "--job", str(config / JOB_FILE), "--shard", f"{number}/{count}",
            "--shard-plan", str(config / PLAN_FILE), "--run-id", f"{settings['runId']}-{number}",
            "--artifacts", str(results / f"shard-{number}"), "--build-id", str(settings["buildId"]),
            "--collect-node-logs", "never", "--cases", str(settings["cases"])]


def stream_run(args: argparse.Namespace) -> int:
    """`winsuite run` with `args`: each row written to stdout as it finishes, then the whole build."""
    from winsuite.run.runner import Runner

    runner = Runner.from_args(args)
    emit = protocol.emitter(sys.stdout)
    runner.on_row = lambda phase, attempt, final: emit(protocol.row(phase, attempt, final))
    code = int(runner.run())
    sys.stdout.flush()
    for message in protocol.build_messages(runner.layout.build_dir, code):
        emit(message)
    return code


def completion_index() -> int:
    index = os.environ.get(INDEX_ENV, "")
    if not index.isdigit():
        raise UsageError(f"shard-worker runs in a pod of an Indexed Job (${INDEX_ENV} is {index!r})")
    return int(index)
