"""The `winsuite` command: wires the subcommands of suite/commands/ and turns user errors into one line."""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from collections.abc import Sequence
from typing import NoReturn

from winsuite import paths
from winsuite import timeline
from winsuite.commands import cleanup
from winsuite.commands import cluster
from winsuite.commands import exclusions
from winsuite.commands import images
from winsuite.commands import incluster
from winsuite.commands import list as listing
from winsuite.commands import merge
from winsuite.commands import plan
from winsuite.commands import prepull
from winsuite.commands import publish
from winsuite.commands import report
from winsuite.commands import run
from winsuite.errors import ExitCode
from winsuite.errors import UsageError
from winsuite.errors import one_line
from winsuite.process_exit import exit_now

# Each module of suite/commands/ adds its subcommand(s) with `register(subparsers)`; --help lists them in this order.
COMMAND_MODULES = (run, listing, plan, images, prepull, exclusions, cleanup, cluster, report, publish, merge,
                   incluster)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="winsuite",
        description="Run the Kubernetes SIG-Windows testing plan (KEP-116) and publish its results.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    timeline.since_process_start("cli: start and imports")
    try:
        return int(args.handler(args))
    except UsageError as err:
        print(f"winsuite: error: {one_line(str(err))}", file=sys.stderr)
        return int(err.exit_code)
    except KeyboardInterrupt:
        print("winsuite: interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:  # `winsuite list | head`
        return int(ExitCode.OK)
    except Exception as err:  # a bug of winsuite: one line, the traceback kept for the bug report
        print(f"winsuite: internal error: {one_line(repr(err))} (traceback in {_save_traceback()})",
              file=sys.stderr)
        return int(ExitCode.INTERNAL_ERROR)


def _save_traceback() -> str:
    """The current exception's traceback in a file of its own under the cache (or stderr if that fails)."""
    text = traceback.format_exc()
    try:
        crashes = paths.cache_dir() / "crashes"
        crashes.mkdir(parents=True, exist_ok=True)
        path = crashes / f"{time.strftime('%Y%m%d%H%M%S')}-{os.getpid()}.txt"
        path.write_text(text)
        return str(path)
    except OSError:
        sys.stderr.write(text)
        return "the lines above"


def entry() -> NoReturn:
    """The `winsuite` command: main(), then an exit that skips the interpreter's finalization."""
    exit_now(main())


if __name__ == "__main__":
    entry()
