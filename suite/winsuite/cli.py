"""The `winsuite` command: wires the subcommands of suite/winsuite/commands/ and turns user errors into one line."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
import traceback
from collections.abc import Sequence
from typing import NoReturn

from winsuite import paths
from winsuite import timeline
from winsuite.errors import ExitCode
from winsuite.errors import UsageError
from winsuite.errors import one_line
from winsuite.process_exit import exit_now

# Each subcommand and the module of winsuite.commands that adds it with `register(subparsers)`, in --help's order. A
# command imports its own module alone: the others' imports (pytest, the Kubernetes client, jinja) would cost more
# than many commands' own work.
COMMANDS = {
    "run": "run", "list": "list", "plan": "plan", "images": "images", "prepull": "prepull",
    "exclusions": "exclusions", "cleanup": "cleanup", "cluster": "cluster", "report": "report", "publish": "publish",
    "merge": "merge", "image": "incluster", "attach": "incluster", "shard-worker": "incluster",
}


class CommandParser(argparse.ArgumentParser):
    """argparse with winsuite's usage errors: one line naming the command, and exit code 4 (argparse's own 2 is
    "interrupted" in winsuite's exit codes). Subcommands get this class too; --help still exits 0."""

    def error(self, message: str) -> NoReturn:
        self.exit(int(ExitCode.USAGE_ERROR), f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")

    def parse_known_args(  # type: ignore[override]  # typeshed's overloads; argparse calls it with these only
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """What a subcommand does not know is its error, in its name: argparse would hand it up to `winsuite`."""
        parsed, unknown = super().parse_known_args(args, namespace)
        if unknown:
            self.error(f"unrecognized arguments: {' '.join(unknown)}")
        return parsed, unknown


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or of `command` alone when it names one."""
    parser = CommandParser(
        prog="winsuite",
        description="Run the Kubernetes SIG-Windows testing plan (KEP-116) and publish its results.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    modules = [COMMANDS[command]] if command in COMMANDS else dict.fromkeys(COMMANDS.values())
    for module in modules:
        importlib.import_module(f"winsuite.commands.{module}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(given[0] if given else None).parse_args(given)
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
    except Exception as err:  # credentials the cluster refused; else a bug of winsuite: one line, its traceback kept
        from winsuite.k8s.api_answer import credentials_refused  # the Kubernetes client only where it is in use

        if (refused := credentials_refused(err)) is not None:
            print(f"winsuite: error: {one_line(str(refused))}", file=sys.stderr)
            return int(refused.exit_code)
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
