"""`kubetest2-tester-winsuite`: winsuite as a kubetest2 tester, so that the cluster of a prow job's deployer (kind,
gce, capz, eks, noop) is tested by `kubetest2 DEPLOYER --up --down --test=winsuite -- [winsuite run's flags]`.

kubetest2's side of the contract (sigs.k8s.io/kubetest2: pkg/app/cmd.go, pkg/app/app.go, pkg/app/shim/testers.go):
the tester is the executable `kubetest2-tester-<name>` found on PATH. kubetest2 first runs it with `--help` followed
by the tester's arguments, and shows what it prints on stdout as the tester's usage (a non-zero exit stops kubetest2
with the tester's stderr). After the deployer's Up it runs it with the arguments after `--`, in an environment that
adds ARTIFACTS (the artifacts directory, which prow uploads as the build's artifacts/; kubetest2 has written its
metadata.json and junit_runner.xml there), KUBETEST2_RUN_DIR, KUBETEST2_RUN_ID and, when the deployer has one,
KUBECONFIG. The tester's exit status is the Test step's: non-zero fails the step and kubetest2 with it.

The tester runs `winsuite run` with the deployer's kubeconfig. Its build stays whole under the run directory, and
its artifacts/ are handed over into $ARTIFACTS once the run has ended (after its credential scan, which does not
follow a symlinked artifacts/), as prow's layout has them: junit_NN.xml and metadata.json directly under $ARTIFACTS
and each failed test's diagnostics beside them, where the rows' links (relative to the build) point in the uploaded
build.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
from collections.abc import Mapping
from collections.abc import Sequence
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any
from typing import NoReturn

from winsuite import cli
from winsuite.commands import run as run_command
from winsuite.errors import ExitCode
from winsuite.errors import UsageError
from winsuite.errors import one_line
from winsuite.given_paths import unwritable
from winsuite.policy import options
from winsuite.process_exit import exit_now
from winsuite.results import prow
from winsuite.results.junit import write_atomically
from winsuite_reports.conventions import BUILD_LOG
from winsuite_reports.conventions import METADATA
from winsuite_reports.conventions import artifacts_dir

NAME = "kubetest2-tester-winsuite"
# kubetest2 shows the usage under "TesterArgs(winsuite):", after its own `kubetest2 DEPLOYER [Flags] -- [TesterArgs]`.
USAGE_PROG = "kubetest2 DEPLOYER --test=winsuite --"
BUILD_LOG_COPY = "winsuite-build-log.txt"  # beside the artifacts: what the run said, and any traceback
BUILDS = "winsuite"  # the builds' directory under the run directory
# The flags by which the tester's arguments choose the cluster themselves (else: the deployer's $KUBECONFIG).
CLUSTER_CHOICE = tuple(o.dest for o in options.CLUSTER_OPTIONS
                       if o.flag in ("--kubeconfig", "--in-cluster-config", "--cluster-type"))
EXIT_CODES = (ExitCode.OK, ExitCode.TESTS_FAILED, ExitCode.INTERRUPTED, ExitCode.INTERNAL_ERROR,
              ExitCode.USAGE_ERROR, ExitCode.NO_TESTS_SELECTED, ExitCode.CLUSTER_UNREACHABLE, ExitCode.TIMED_OUT)

DESCRIPTION = (
    "winsuite as a kubetest2 tester: runs `winsuite run` with these flags against the deployer's cluster ($KUBECONFIG "
    "as --kubeconfig, unless --kubeconfig, --in-cluster-config or --cluster-type is given) and hands the build's "
    "artifacts over into $ARTIFACTS as prow uploads them: junit_NN.xml, metadata.json (kubetest2's keys kept) and the "
    f"failed tests' diagnostics directly under it, the run's log as {BUILD_LOG_COPY}. The whole build stays in "
    f"$KUBETEST2_RUN_DIR/{BUILDS}/BUILD, named by --build-id, else prow's $BUILD_ID, else its start time."
)
EPILOG = (
    "Exit codes are winsuite run's: " + ", ".join(f"{c.value} {c.name.lower().replace('_', ' ')}" for c in EXIT_CODES)
    + "; kubetest2 fails its Test step on any but 0. kubetest2 names the artifacts directory: leave out --artifacts "
    "(and --detach: kubetest2 waits for the tester's result)."
)


@dataclasses.dataclass(frozen=True)
class Kubetest2Env:
    """What kubetest2 hands its tester in the environment (pkg/app/app.go), with kubetest2's defaults where it is
    unset (pkg/artifacts/paths.go: ./_artifacts, ./_rundir), paths made absolute as kubetest2 makes them."""

    artifacts: Path
    run_dir: Path
    kubeconfig: str | None  # the deployer's; unset when it has none
    build_id: str | None  # prow's BUILD_ID: the build the job's results belong to

    @staticmethod
    def from_environ(environ: Mapping[str, str], cwd: Path) -> Kubetest2Env:
        def absolute(value: str) -> Path:
            return Path(os.path.normpath(cwd / value))

        kubeconfig = environ.get("KUBECONFIG") or None
        return Kubetest2Env(
            artifacts=absolute(environ.get("ARTIFACTS") or "_artifacts"),
            run_dir=absolute(environ.get("KUBETEST2_RUN_DIR") or "_rundir"),
            kubeconfig=str(absolute(kubeconfig)) if kubeconfig and os.pathsep not in kubeconfig else kubeconfig,
            build_id=environ.get("BUILD_ID") or None,
        )


@dataclasses.dataclass(frozen=True)
class RunRequest:
    """The `winsuite run` one invocation of the tester stands for."""

    args: tuple[str, ...]  # the tester's arguments (what followed kubetest2's `--`), passed on as they are
    kubeconfig: str | None  # given as --kubeconfig (None: the arguments choose the cluster, or nobody gave one)
    build_id: str | None  # the build's name (None: its start time, as winsuite run names builds)

    def argv(self, build_dir: Path) -> list[str]:
        """`winsuite run`'s command line: the tester's own flags first, so the arguments' `--` still ends them."""
        cluster = ["--kubeconfig", self.kubeconfig] if self.kubeconfig else []
        return ["run", "--artifacts", str(build_dir), *cluster, *self.args]


def arguments_parser() -> argparse.ArgumentParser:
    """winsuite run's own parser (the tester takes its flags), presented as kubetest2 shows a tester's usage."""
    top: argparse.ArgumentParser = cli.CommandParser()  # its subcommands' usage errors exit 4, as winsuite's do
    subparsers = top.add_subparsers()
    run_command.register(subparsers)
    parser = subparsers.choices["run"]
    parser.prog, parser.description, parser.epilog = USAGE_PROG, DESCRIPTION, EPILOG
    return parser


def requested_run(args: Sequence[str], env: Kubetest2Env) -> RunRequest:
    """The run the tester's arguments ask for in kubetest2's environment (`--help` prints the usage and exits)."""
    given = arguments_parser().parse_args(args)
    if given.artifacts is not None:
        raise UsageError("--artifacts: kubetest2 names the artifacts directory ($ARTIFACTS; kubetest2's own "
                         "--artifacts flag sets it): leave it out of the tester's arguments")
    if given.detach:
        raise UsageError("--detach: kubetest2 takes the tester's exit as the Test step's result, so the tester waits "
                         "for the run: leave it out")
    chosen = any(getattr(given, dest) not in (None, False) for dest in CLUSTER_CHOICE)
    if env.kubeconfig and not chosen and os.pathsep in env.kubeconfig:
        raise UsageError(f"$KUBECONFIG lists several files ({env.kubeconfig}); winsuite reads one: pass "
                         "--kubeconfig FILE after kubetest2's `--`")
    return RunRequest(tuple(args), kubeconfig=None if chosen else env.kubeconfig,
                     build_id=given.build_id or env.build_id)


def merged_metadata(kubetest2: Mapping[str, Any], winsuite: Mapping[str, Any], version: str) -> dict[str, Any]:
    """$ARTIFACTS/metadata.json: what kubetest2 wrote there (its version, the deployer's), then the build's own, with
    the keys kubetest2's testers add (pkg/testers/metadata.go): tester-version, and job-version, the version of
    Kubernetes tested (here the cluster's), which TestGrid can show as the column header."""
    merged = {**kubetest2, **winsuite}
    merged.setdefault("tester-version", version)
    merged.setdefault("job-version", str(winsuite.get("kubernetes-version", "")))
    return merged


def read_metadata(path: Path) -> dict[str, Any]:
    """A metadata.json's object; {} where there is none or it cannot be read (the merged one replaces it)."""
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def new_build_dir(root: Path, build_id: str | None) -> Path:
    """The build's directory under `root`, made now: named `build_id`, else by its start time as winsuite names
    builds (made atomically, so two runs starting in the same second never share it)."""
    try:
        if build_id is None:
            return root / prow.new_build_id(root)
        (root / build_id).mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise unwritable("the build", err.filename or root, err) from None
    return root / build_id


def hand_over(build_dir: Path, artifacts: Path) -> bool:
    """The build's artifacts/ into `artifacts`, its metadata merged into kubetest2's and its log beside them; False
    when the run ended before writing a build (its empty directory is removed)."""
    built = artifacts_dir(build_dir)
    if not built.is_dir():
        if build_dir.is_dir() and not any(build_dir.iterdir()):
            build_dir.rmdir()
        return False
    kubetest2 = read_metadata(artifacts / METADATA)
    try:
        version = importlib_metadata.version("winsuite")
    except importlib_metadata.PackageNotFoundError:
        version = "unknown"
    metadata = merged_metadata(kubetest2, read_metadata(built / METADATA), f"winsuite {version}")
    try:
        shutil.copytree(built, artifacts, symlinks=True, dirs_exist_ok=True)
        if (build_dir / BUILD_LOG).is_file():
            shutil.copyfile(build_dir / BUILD_LOG, artifacts / BUILD_LOG_COPY)
        write_atomically(artifacts / METADATA, (json.dumps(metadata, indent=2, sort_keys=True) + "\n").encode())
    except OSError as err:
        raise unwritable("the build's artifacts", err.filename or artifacts, err) from None
    return True


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    env = Kubetest2Env.from_environ(os.environ if environ is None else environ, Path.cwd())
    try:
        planned = requested_run(sys.argv[1:] if argv is None else list(argv), env)
        build_dir = new_build_dir(env.run_dir / BUILDS, planned.build_id)
    except UsageError as err:
        print(f"{NAME}: error: {one_line(str(err))}", file=sys.stderr)
        return int(err.exit_code)
    code = cli.main(planned.argv(build_dir))
    try:
        if hand_over(build_dir, env.artifacts):
            print(f"{NAME}: artifacts in {env.artifacts} (the whole build in {build_dir})", flush=True)
    except UsageError as err:
        print(f"{NAME}: error: {one_line(str(err))}", file=sys.stderr)
        return code or int(err.exit_code)  # results that did not reach $ARTIFACTS fail a passed run
    return code


def entry() -> NoReturn:
    """The `kubetest2-tester-winsuite` command: main(), then an exit that skips the interpreter's finalization."""
    exit_now(main())


if __name__ == "__main__":
    entry()
