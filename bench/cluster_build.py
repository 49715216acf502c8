"""Benchmark: the embedded cluster's build (cold and warm) and `cluster up` until every node is Ready.

Cold (`--cold`): a fresh winsuite cache and a fresh GOCACHE (the module cache is kept unless
`--fresh-modcache`, which downloads every module again). Warm: the same build again, from the cache.
`cluster up` is timed with cached binaries, simulated-only and with the real node (when the machine
allows it). Goals: up <= 20 s simulated-only, <= 30 s with the real node; exit 1 when one is missed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from winsuite.cluster.embedded.launcher import real_node_decision
from winsuite.components.artifacts import bin_dir_from_env
from winsuite.components.simnodes import ClusterConfig

WINSUITE = (sys.executable, "-m", "winsuite.cli")
UP_GOALS = {"simulated-only": 20.0, "with the real node": 30.0}


def timed(args: list[str], env: dict[str, str]) -> float:
    """Seconds one `winsuite` command takes; its progress lines go to stderr as they come."""
    started = time.monotonic()
    subprocess.run([*WINSUITE, *args], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def build_times(env: dict[str, str], e2e: bool) -> tuple[float, float]:
    build = ["cluster", "build", *(["--e2e-test"] if e2e else [])]
    return timed(build, env), timed(build, env)


def up_time(env: dict[str, str], name: str, real_node: bool) -> float:
    """`cluster up` to all nodes Ready (the command returns then); the cluster is taken down after."""
    try:
        return timed(["cluster", "up", "--name", name, "--real-node" if real_node else "--no-real-node"], env)
    finally:
        subprocess.run([*WINSUITE, "cluster", "down", "--name", name], env=env, check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cold", action="store_true", help="fresh winsuite cache and GOCACHE (≈ 9 min on 2 cores)"
    )
    parser.add_argument("--fresh-modcache", action="store_true", help="with --cold: a fresh GOMODCACHE too")
    parser.add_argument("--e2e-test", action="store_true", help="include upstream e2e.test in the build")
    parser.add_argument("--skip-up", action="store_true", help="time the build only")
    args = parser.parse_args()

    env = dict(os.environ)
    scratch = tempfile.TemporaryDirectory(prefix="winsuite-bench-") if args.cold else None
    if scratch is not None:
        root = Path(scratch.name)
        env.update(WINSUITE_CACHE_DIR=str(root / "cache"), GOCACHE=str(root / "gocache"))
        env.pop("WINSUITE_BIN_DIR", None)  # a cold build builds everything
        if args.fresh_modcache:
            env["GOMODCACHE"] = str(root / "gomodcache")
    try:
        first, second = build_times(env, args.e2e_test)
        label = "cold" if args.cold else "first (as cached)"
        rows: list[tuple[str, float, float | None]] = [(f"build, {label}", first, None),
                                                       ("build, warm (cached)", second, None)]
        if not args.skip_up:
            rows.append(
                ("up, simulated-only", up_time(env, "bench-simulated", False), UP_GOALS["simulated-only"])
            )
            reason = real_node_decision(ClusterConfig(), bin_dir_from_env())
            if reason:
                print(f"up with the real node: not measured ({reason})")
            else:
                took = up_time(env, "bench-real", True)
                rows.append(("up, with the real node", took, UP_GOALS["with the real node"]))
    finally:
        if scratch is not None:
            subprocess.run(["chmod", "-R", "u+w", scratch.name], check=False)  # the module cache is read-only
            scratch.cleanup()

    missed = False
    for what, seconds, goal in rows:
        verdict = ""
        if goal is not None:
            missed = missed or seconds > goal
            verdict = f" (goal <= {goal:.0f} s: {'met' if seconds <= goal else 'MISSED'})"
        print(f"{what:<28} {seconds:8.1f} s{verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
