"""Benchmark: the kind target end to end, beside the embedded cluster.

Times `cluster build --kind` (first, then again from the cache), `cluster up --type kind` until it serves, and
`winsuite run --node-os linux` of one focus with both engines on the kind cluster; with `--with-embedded` the same
runs on the embedded cluster while the kind cluster is up, then both clusters are taken down and the host's firewall
rules, interfaces, mounts and IP forwarding are compared with what they were before either started.

`--cold`: a fresh winsuite cache and GOCACHE/GOMODCACHE; with `--reuse-embedded` the embedded cluster's binaries (and
e2e.test) already built are used as they are, so what is timed is what the kind target adds (the kind CLI, containerd,
crictl, CNI plugins, kubeadm unless present, the root file system, the images, the assembly).

Goals: the cached build <= 30 s, `up` <= 180 s, every run passes, the host is as before; exit 1 when one is missed.
Hold /tmp/winsuite-cluster.lock (and /tmp/winsuite-kind.lock) around it on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.tools.host_state import HostState
from winsuite.components.artifacts import cached_path
from winsuite.components.artifacts import catalog
from winsuite.inputs.pins import load_pins

WINSUITE = (sys.executable, "-m", "winsuite.cli")
FOCUS = r"\[sig-node\] (ConfigMap|Secrets)"
GOALS = {"build --kind, cached": 30.0, "up --type kind": 180.0}
NAME = "bench-kind"


def timed(args: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Seconds one `winsuite` command takes and its exit code; its progress goes to stderr as it comes."""
    started = time.monotonic()
    code = subprocess.run([*WINSUITE, *args], env=env, check=False, stdout=subprocess.DEVNULL).returncode
    return time.monotonic() - started, code


def reuse_embedded_binaries(directory: Path) -> None:
    """A bin directory of links to the embedded cluster's built artifacts (what `--reuse-embedded` keeps warm)."""
    directory.mkdir(parents=True)
    for artifact in catalog(load_pins()):
        built = cached_path(artifact)
        if built.exists() and artifact.source.key in ("kubernetes", "etcd", "kwok", "coredns"):
            (directory / artifact.name).symlink_to(built)


def cold_env(env: dict[str, str], scratch: Path, reuse_embedded: bool) -> None:
    if reuse_embedded:
        reuse_embedded_binaries(scratch / "bin")
        env["WINSUITE_BIN_DIR"] = str(scratch / "bin")
    else:
        env.pop("WINSUITE_BIN_DIR", None)
    env.update(WINSUITE_CACHE_DIR=str(scratch / "cache"), GOCACHE=str(scratch / "gocache"),
               GOMODCACHE=str(scratch / "gomodcache"))


def runs(cluster: list[str], label: str, env: dict[str, str], results: Path) -> list[tuple[str, float, int]]:
    rows = []
    for engine in ("native", "upstream"):
        took, code = timed(["run", *cluster, "--node-os", "linux", "--engine", engine, "--focus", FOCUS,
                            "--results-root", str(results / f"{label}-{engine}")], env)
        rows.append((f"run {FOCUS} --engine {engine}, {label}", took, code))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true", help="fresh winsuite, Go build and module caches")
    parser.add_argument("--reuse-embedded", action="store_true",
                        help="with --cold: use the embedded cluster's binaries already built (time the kind parts)")
    parser.add_argument("--with-embedded", action="store_true",
                        help="also run on the embedded cluster while the kind cluster is up, and check the host after")
    args = parser.parse_args()

    env = dict(os.environ)
    scratch = tempfile.TemporaryDirectory(prefix="winsuite-bench-kind-")
    if args.cold:
        cold_env(env, Path(scratch.name), args.reuse_embedded)
    before = HostState.now()
    timings: list[tuple[str, float, int]] = []
    try:
        first = timed(["cluster", "build", "--kind"], env)
        timings.append((f"build --kind, {'cold' if args.cold else 'first'}", *first))
        timings.append(("build --kind, cached", *timed(["cluster", "build", "--kind"], env)))
        timings.append(("up --type kind", *timed(["cluster", "up", "--type", "kind", "--name", NAME], env)))
        timings += runs(["--cluster-type", "kind", "--cluster-name", NAME], "kind", env, Path(scratch.name))
        if args.with_embedded:
            timings.append(("up (embedded), kind cluster up", *timed(["cluster", "up", "--name", NAME], env)))
            timings += runs(["--cluster-name", NAME], "embedded", env, Path(scratch.name))
    finally:
        subprocess.run([*WINSUITE, "cluster", "down", "--type", "kind", "--name", NAME], env=env, check=False)
        if args.with_embedded:
            subprocess.run([*WINSUITE, "cluster", "down", "--name", NAME], env=env, check=False)
        scratch.cleanup()
    changes = HostState.now().changes_since(before)
    missed = False
    for what, took, code in timings:
        goal = GOALS.get(what)
        verdict = "" if goal is None else f" (goal <= {goal:.0f}s: {'met' if took <= goal else 'MISSED'})"
        failed = "" if code == 0 else f"  FAILED (exit {code})"
        missed |= bool(code) or (goal is not None and took > goal)
        print(f"{what:<70} {took:7.1f}s{verdict}{failed}")
    print(f"host after both downs: {'as before' if not changes else 'CHANGED'}")
    for change in changes:
        print(f"  {change}")
    missed |= bool(changes)
    print("goal met" if not missed else "goal MISSED")
    return int(missed)


if __name__ == "__main__":
    sys.exit(main())
