"""The `winsuite` command: wires the subcommands of suite/commands/ and turns user errors into one line."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from winsuite.errors import ExitCode
from winsuite.errors import UsageError

# Each module of suite/commands/ adds its subcommand(s) with `register(subparsers)`.
COMMAND_MODULES = (
    "winsuite.commands.run",
    "winsuite.commands.list",
    "winsuite.commands.plan",
    "winsuite.commands.images",
    "winsuite.commands.prepull",
    "winsuite.commands.exclusions",
    "winsuite.commands.cleanup",
    "winsuite.commands.cluster",
    "winsuite.commands.report",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="winsuite",
        description="Run the Kubernetes SIG-Windows testing plan (KEP-116) and publish its results.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except UsageError as err:
        print(f"winsuite: error: {err}", file=sys.stderr)
        return int(err.exit_code)
    except KeyboardInterrupt:
        print("winsuite: interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:  # `winsuite list | head`
        return int(ExitCode.OK)


if __name__ == "__main__":
    sys.exit(main())
