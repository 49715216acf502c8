"""`winsuite merge`: the builds of one job's shards (`winsuite run --shard I/N`) made one build in the prow layout."""

from __future__ import annotations

import argparse

from winsuite.commands._types import Subparsers
from winsuite.given_paths import unwritable


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "merge", help="merge the shard builds of one job into one build",
        description="Every shard's rows per phase (junit_NN.xml), finished.json SUCCESS only when every shard passed, "
        "the shards named in the metadata; a test in two shard builds is refused.")
    parser.add_argument("builds", nargs="+", metavar="BUILD_DIR", help="the shard builds, one per shard")
    parser.add_argument("--results-root", metavar="DIR", default="_artifacts",
                        help="the merged build goes to DIR/<job>/<build id> (default: _artifacts)")
    parser.add_argument("--artifacts", metavar="DIR", help="the merged build's directory (instead of the results root)")
    parser.add_argument("--build-id", help="the merged build's id (default: now, YYYYMMDDHHMMSS)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from winsuite.errors import ExitCode
    from winsuite.policy.run_config import Output
    from winsuite.results import prow
    from winsuite.results.build import Build
    from winsuite.results.merge import final_attempts
    from winsuite.results.merge import verdict
    from winsuite.results.prow import BuildResult
    from winsuite.run.shard_files import DirectoryFiles
    from winsuite.run.shard_merge import check_shards
    from winsuite.run.shard_merge import finished_metadata
    from winsuite.run.shard_merge import merge_into
    from winsuite.run.shard_merge import merged_metadata
    from winsuite.run.shard_merge import merged_result
    from winsuite.run.shard_merge import merged_start
    from winsuite.run.shard_merge import read_shard_build
    from winsuite.run.summary import result_reasons
    from winsuite.run.summary import summarize

    builds = [read_shard_build(DirectoryFiles(Path(directory))) for directory in args.builds]
    check_shards(builds)
    job = str(builds[0].metadata.get("job") or "winsuite")
    if args.artifacts:
        build_dir, job_dir = Path(args.artifacts), None
    else:
        job_dir = Path(args.results_root) / job
        try:
            build_dir = job_dir / (args.build_id or prow.new_build_id(job_dir))
        except OSError as err:
            raise unwritable("the merged build", err.filename or job_dir, err) from None
    build = Build(Output(build_dir, build_dir.name, job_dir))
    metadata = merged_metadata(builds)
    build.start(merged_start(builds), metadata)
    merge_into(builds, build)
    result = merged_result(builds)
    finished = finished_metadata(builds, metadata)
    build.finish(result, finished)
    print(f"merged {len(builds)} shard build(s) of job {job} into {build_dir}")
    rows = build.rows
    print(summarize(rows, build_dir=build_dir, result=result, interrupted="", dashboard=None,
                    reasons=result_reasons(finished)), end="")
    if result is not BuildResult.SUCCESS:
        return int(ExitCode.INTERRUPTED if result is BuildResult.ABORTED else ExitCode.TESTS_FAILED)
    failed = any(verdict(r) in ("failed", "interrupted") for r in final_attempts(rows).values())
    return int(ExitCode.TESTS_FAILED if failed else ExitCode.OK)
