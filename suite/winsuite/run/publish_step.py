"""Publishing as a command's step: `winsuite publish`, and `winsuite run --publish` once the run's results are
written (also after an interrupt); one line saying where the build went, or why it did not and how to finish it."""

from __future__ import annotations

import sys
from pathlib import Path

from winsuite.errors import ExitCode
from winsuite.errors import one_line
from winsuite.run.publish import publish
from winsuite.run.results_roots import FAILURE_EXIT
from winsuite_reports.store import StoreError


def publish_and_say(build_dir: Path, dest: str) -> ExitCode:
    """Publish the build; the exit code of the store's failure when it fails (UsageError passes through)."""
    try:
        done = publish(build_dir, dest, say=lambda line: print(line, file=sys.stderr, flush=True))
    except StoreError as err:
        print(f"winsuite publish: error: {one_line(str(err))}; publish again to finish it: "
              f"winsuite publish {build_dir} {dest}", file=sys.stderr)
        return FAILURE_EXIT[err.failure]
    latest = "latest-build.txt names it" if done.latest else "latest-build.txt names a newer build"
    print(f"winsuite publish: {done.url}: {done.uploaded} file(s) uploaded, {done.already_there} already there; "
          f"{latest}", flush=True)
    return ExitCode.OK


def after_run(build_dir: Path, dest: str, run_exit: int) -> int:
    """`run --publish`: the run's build published; the run's exit code unless the run passed and publishing
    failed."""
    published = publish_and_say(build_dir, dest)
    return run_exit if run_exit != ExitCode.OK else int(published)
