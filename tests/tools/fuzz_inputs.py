"""Malformed inputs for every kind of file winsuite reads, made by mutating the project's own examples (the
mutations: tests/tools/fuzz_mutations.py), and the CLI command that reads each kind. Shared by the hypothesis suite
(tests/unit/test_fuzz_inputs.py) and bench/fuzz_inputs.py.

A case is `certainly_bad` when no reading of the schema could accept it (undecodable bytes, a duplicate key, a
value YAML cannot build, nesting or aliases past the limits, not a regular file, a string field turned into a
list or mapping); for those an exit code of 0 is a defect. Other mutations (random byte edits, a dropped key)
may well leave a valid file, and only have to end cleanly.

The path cases put a valid file where it cannot be read: inside a directory that cannot be entered, under a name
longer than the file system allows, or at a path longer than the system allows. Each must end in a usage error (exit
4) whose one line names the file."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import ipaddress
import json
import os
import re
import socket
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from tests.tools.unprivileged import without_dac_override
from winsuite import paths
from winsuite.policy.shards import ShardedTest
from winsuite.policy.shards import cut_shards
from winsuite.policy.shards import shards_document
from winsuite_reports import synthetic
from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import METADATA
from winsuite_reports.conventions import STARTED

CLOSED_SERVER = "https://127.0.0.1:1"  # nothing listens there: a valid kubeconfig fails fast with exit 6
SPECIAL = ("fifo", "directory", "missing", "huge")
PATH_CASES = ("unreadable-directory", "long-name", "long-path")
LOCKED = "locked"  # the directory made unenterable (mode 000)
LONG_NAME = "n" * 300  # NAME_MAX is 255 bytes on Linux file systems
LONG_PATH = ("d" * 200 + "/") * 25  # 5,000 bytes: PATH_MAX is 4,096


@dataclasses.dataclass(frozen=True)
class Case:
    kind: str
    mutation: str
    certainly_bad: bool
    data: bytes = b""  # the mutated file's bytes, unless `mutation` is one of SPECIAL
    target: str = ""  # for results: which file of the build was mutated


@dataclasses.dataclass(frozen=True)
class Kind:
    """One kind of input: its example files, and how the CLI is pointed at a file of it."""

    name: str
    seeds: Callable[[], list[bytes]]
    argv: Callable[[Path, Path], list[str]]  # (the input's path, a scratch directory) -> winsuite arguments
    allowed_exits: frozenset[int]
    env: Callable[[Path], dict[str, str]] = lambda path: {}
    strict_keys: bool = True  # an unknown top-level key is an error (kubeconfigs and repo lists ignore them)
    empty_ok: bool = False  # an empty document is valid (an empty repo list changes nothing, as upstream reads it)
    list_fields: frozenset[str] = frozenset()  # string fields that also take a list


# --- seeds: the project's own files, with relative paths made absolute so a copy elsewhere still resolves ---

def _job_seeds() -> list[bytes]:
    jobs = paths.jobs_dir()
    seeds = []
    for name in ("embedded.yaml", "embedded-linux.yaml", "sig-windows-parallel.yaml"):
        text = (jobs / name).read_text()
        text = text.replace("../test_images/", f"{paths.test_images_dir()}/")
        text = re.sub(r"(?m)^(\s*- )exclusions/", rf"\1{jobs}/exclusions/", text)
        seeds.append(text.encode())
    return seeds


def _files(directory: Path, pattern: str) -> Callable[[], list[bytes]]:
    return lambda: [path.read_bytes() for path in sorted(directory.glob(pattern))]


def _ops_readiness_seeds() -> list[bytes]:
    """winsuite's own specifications, and upstream's as published (empty categories, `skip: ['']`)."""
    fixtures = Path(__file__).parents[1] / "fixtures"
    return (_files(fixtures / "ops-readiness/specifications", "*/spec.yaml")()
            + _files(fixtures / "ops-readiness-upstream/specifications", "*/spec.yaml")())


def _kubeconfig_seeds() -> list[bytes]:
    def doc(user: dict[str, Any], cluster: dict[str, Any]) -> bytes:
        return yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "fuzz",
            "clusters": [{"name": "fuzz", "cluster": {"server": CLOSED_SERVER, **cluster}}],
            "users": [{"name": "fuzz", "user": user}],
            "contexts": [{"name": "fuzz", "context": {"cluster": "fuzz", "user": "fuzz", "namespace": "default"}}],
        }, sort_keys=False).encode()

    return [
        doc({"token": "fuzz-token"}, {"insecure-skip-tls-verify": True}),
        doc({"username": "admin", "password": "secret"}, {"certificate-authority-data": "Zm9vYmFy"}),
        doc({"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "/bin/false",
                      "args": ["token"], "env": [{"name": "A", "value": "b"}]}}, {"tls-server-name": "fuzz"}),
    ]


def _shard_plan_seeds() -> list[bytes]:
    shards = cut_shards([ShardedTest("[sig-node] a"), ShardedTest("[sig-node] b", serial=True),
                         ShardedTest("[sig-node] c", skipped=True)], 2, {"[sig-node] a": 3.0})
    return [json.dumps(shards_document("fuzz-job", shards)).encode()]


def _results_seeds() -> list[bytes]:
    return [b""]  # a results case mutates one file of a build written by `build_results` instead


RESULTS_STARTED = 1_790_000_000


def build_results(root: Path) -> Path:
    """A job with one stored build of every cell kind (passed, failed, skipped, flaky) under `root`."""
    job = root / "fuzz-job"
    build = synthetic.write_build(
        job, RESULTS_STARTED, {"[sig-node] a passes": "P", "[sig-node] b fails": "F", "[sig-node] c skips": "S"},
        metadata={"node-os": "linux", "engine": "native", "parallelism": 1},
        properties={"[sig-node] a passes": {"tier": "adapted", "tags": "NodeConformance"}},
    )
    return job / build


RESULT_FILES = (STARTED, FINISHED, f"artifacts/{METADATA}", "artifacts/junit_01.xml")


def _closed_kubeconfig(scratch: Path) -> Path:
    path = scratch / "closed.kubeconfig"
    if not path.exists():
        path.write_bytes(_kubeconfig_seeds()[0])
    return path


KINDS: dict[str, Kind] = {
    "job": Kind("job", _job_seeds, lambda p, s: ["list", "--job", str(p), "--format", "names"],
                frozenset({0, 4, 5}), list_fields=frozenset({"focus", "skip", "exclusions"})),
    "exclusions": Kind("exclusions", _files(Path(paths.jobs_dir(), "exclusions"), "*.yaml"),
                       lambda p, s: ["exclusions", "lint", str(p)], frozenset({0, 4, 8})),
    "repo-list": Kind("repo-list", _files(Path(paths.test_images_dir(), "repo-lists"), "*.yaml"),
                      lambda p, s: ["images", "--repo-list", str(p), "--format", "refs"],
                      frozenset({0, 4, 5}), strict_keys=False, empty_ok=True),
    "repo-list-env": Kind("repo-list-env", _files(Path(paths.test_images_dir(), "repo-lists"), "*.yaml"),
                          lambda p, s: ["images", "--format", "refs"], frozenset({0, 4, 5}),
                          env=lambda p: {"KUBE_TEST_REPO_LIST": str(p)}, strict_keys=False, empty_ok=True),
    "kubeconfig": Kind("kubeconfig", _kubeconfig_seeds, lambda p, s: ["cleanup", "--kubeconfig", str(p), "--dry-run"],
                       frozenset({4, 6}), strict_keys=False),
    "ops-readiness": Kind("ops-readiness", _ops_readiness_seeds,
                          lambda p, s: ["list", "--ops-readiness", str(p), "--format", "names"],
                          frozenset({0, 4, 5}), list_fields=frozenset({"focus", "skip"})),
    "results-report": Kind("results-report", _results_seeds,
                           lambda p, s: ["report", "--results", str(p.parent), "--format", "markdown"],
                           frozenset({0})),
    "shard-plan": Kind("shard-plan", _shard_plan_seeds,
                       lambda p, s: ["run", "--shard", "1/2", "--shard-plan", str(p), "--kubeconfig",
                                     str(_closed_kubeconfig(s)), "--artifacts", str(s / "shard-artifacts")],
                       frozenset({4, 6})),  # 6: a good plan, then the closed cluster
    "results-rerun": Kind("results-rerun", _results_seeds,
                          lambda p, s: ["run", "--rerun-failed", str(p), "--kubeconfig", str(_closed_kubeconfig(s)),
                                        "--artifacts", str(s / "rerun-artifacts")],
                          frozenset({0, 4, 5, 6})),  # 0: a build with nothing to rerun
}


# --- a case on disk --------------------------------------------------------------------------------------

def materialize(case: Case, scratch: Path) -> tuple[list[str], dict[str, str]]:
    """Write the case under `scratch`; the winsuite arguments and environment that read it."""
    kind = KINDS[case.kind]
    path = given_path(case, scratch)
    if case.mutation in PATH_CASES:
        if case.mutation == "unreadable-directory":
            if case.kind.startswith("results"):
                build_results(scratch / LOCKED / "results")
            else:
                _place(case, path)
            (scratch / LOCKED).chmod(0)
        return kind.argv(path, scratch), kind.env(path)
    if case.kind.startswith("results"):
        _place(case, build_results(path.parents[1]) / case.target)
        return kind.argv(path, scratch), {}
    _place(case, path)
    return kind.argv(path, scratch), kind.env(path)


def given_path(case: Case, scratch: Path) -> Path:
    """Where the case's input is: a file of its kind, or for results the stored build (under results/<job>/)."""
    results = case.kind.startswith("results")
    base = {"unreadable-directory": scratch / LOCKED, "long-name": scratch / LONG_NAME,
            "long-path": scratch / LONG_PATH}.get(case.mutation, scratch)
    if results:
        return base / "results" / "fuzz-job" / synthetic.build_id(RESULTS_STARTED)
    suffix = "/spec.yaml" if case.kind == "ops-readiness" else ""
    return base / f"input-{case.kind}.yaml{suffix}"


def named_in_error(case: Case) -> str:
    """What the error line of a path case must contain: the name of the path the CLI was given."""
    given = given_path(case, Path("/scratch"))
    return given.parent.name if case.kind == "results-report" else given.name


def _place(case: Case, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    if case.mutation == "fifo":
        os.mkfifo(path)
    elif case.mutation == "directory":
        path.mkdir()
    elif case.mutation == "huge":
        path.write_bytes(b"# padding\n" * (1 << 20) + b"x: 1\n")
    elif case.mutation != "missing":
        path.write_bytes(case.data)


def expected(case: Case, code: int, stderr: str) -> str | None:
    """What is wrong with how winsuite ended on `case`, or None when it ended as it should."""
    kind = KINDS[case.kind]
    if "Traceback" in stderr or code == 3 or "internal error" in stderr:
        return "traceback"
    if case.mutation in PATH_CASES:
        lines = [line for line in stderr.splitlines() if line.startswith("winsuite: error:")]
        if code != 4:
            return "wrong exit code"
        return None if len(lines) == 1 and named_in_error(case) in lines[0] else "no one-line error"
    if code not in kind.allowed_exits:
        return "wrong exit code"
    if case.certainly_bad:
        if case.kind == "results-report" and "warning" not in stderr:
            return "bad input accepted"
        if case.kind != "results-report" and code == 0:
            return "bad input accepted"
    errors = (4, 5, 6)  # exit 8 (lint problems) lists them on stdout
    if code in errors and not any(line.startswith("winsuite") for line in stderr.splitlines()):
        return "no one-line error"
    return None


def describe(case: Case) -> str:
    return json.dumps({"kind": case.kind, "mutation": case.mutation, "target": case.target,
                       "bad": case.certainly_bad, "head": case.data[:120].decode("latin-1")})


def run_cli(argv: list[str], env: dict[str, str], *, unprivileged: bool = False) -> tuple[int, str]:
    """winsuite's main() on `argv` in this process: its exit code and what it wrote to stderr (`unprivileged`:
    reading as a user without root's override of file permissions)."""
    from winsuite import cli

    err = io.StringIO()
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    dac = without_dac_override() if unprivileged else contextlib.nullcontext()
    try:
        with dac, contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = cli.main(argv)
            except SystemExit as exit_:  # argparse
                code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return code, err.getvalue()


@contextlib.contextmanager
def keep_to_loopback() -> Iterator[None]:
    """A mutated kubeconfig may name any host: while this holds, resolve loopback addresses only, so nothing leaves
    the machine. The resolver is restored on exit: tests that run later in the same process reach real clusters."""
    resolve = socket.getaddrinfo

    def loopback_only(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        try:
            loopback = name is None or ipaddress.ip_address(name).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if not loopback:
            raise socket.gaierror(socket.EAI_NONAME, f"{host}: not resolved (fuzzing stays on loopback)")
        return resolve(host, *args, **kwargs)

    socket.getaddrinfo = loopback_only
    try:
        yield
    finally:
        socket.getaddrinfo = resolve
