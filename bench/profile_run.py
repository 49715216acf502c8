"""Where a run's time goes: `winsuite run` with its timeline on (winsuite.timeline), printed as a table.

Two runs on the embedded cluster's real Linux node (started if not running): one test, and the 35 native tests of
the side-by-side comparison with upstream (`[sig-node]` Pods, Downward API, ConfigMap, Secrets, Containers, Kubelet,
Variable Expansion). Each table lists, per span, how often it happened, its total and its mean; spans inside the
pytest phase are summed over every process, so they may add up to more than the wall time with -n 2. The last
lines say how much of the wall time the tests themselves took (setup, call and teardown, as pytest reports a
test's duration) and what was spent beyond them.

Runs are measured warm (after a first, uncounted run) and with Python's default bytecode caching, as a user's
second run is (see bench/compare_upstream.py).

Goal (exit code 1 when missed): the one-test run spends <= 4 s beyond the test's own duration.

Usage: python -m bench.profile_run [--name CLUSTER] [--parallelism N] [--one REGEX] [--only REGEX]
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.compare_upstream import focus_of
from bench.compare_upstream import twins
from bench.measure import user_env
from winsuite.cluster.embedded import LocalCluster
from winsuite.timeline import ENV

ROOT = Path(__file__).resolve().parents[1]
GOAL_FIXED_SECONDS = 4.0
ONE_TEST = r"^\[sig-node\] Pods should get a host IP \[NodeConformance\] \[Conformance\]$"
SET_35 = r"^\[sig-node\] (Pods|Downward API|ConfigMap|Secrets|Containers|Kubelet|Variable Expansion)"
TEST_SPANS = ("test: setup", "test: call", "test: teardown")


def profile(cluster: LocalCluster, names: list[str], parallelism: int) -> tuple[float, list[dict[str, object]], str]:
    """Wall time, the timeline's spans and the run's output of one `winsuite run` over `names`."""
    with tempfile.TemporaryDirectory(prefix="winsuite-profile-") as tmp:
        timeline = Path(tmp) / "timeline.jsonl"
        argv = [sys.executable, "-m", "winsuite.cli", "run", "--cluster-name", cluster.name, "--node-os", "linux",
                "--focus", focus_of(names), "-n", str(parallelism),
                "--results-root", str(Path(tmp) / "results")]
        started = time.monotonic()
        done = subprocess.run(argv, cwd=ROOT, env=user_env({ENV: str(timeline)}), capture_output=True, text=True,
                              check=False)
        wall = time.monotonic() - started
        spans = [json.loads(line) for line in timeline.read_text().splitlines()] if timeline.exists() else []
    return wall, spans, done.stdout + done.stderr


def table(title: str, wall: float, spans: list[dict[str, object]]) -> float:
    """Print the table; returns the seconds spent beyond the tests' own durations."""
    totals: dict[str, list[float]] = collections.defaultdict(list)
    for span in spans:
        name = str(span["span"])
        role = span.get("role")
        if role and name.startswith("pytest:"):
            name += " (controller)" if role == "controller" else " (workers)"
        totals[name].append(float(span["end"]) - float(span["start"]))  # type: ignore[arg-type]
    print(f"\n{title}: {wall:.1f} s wall")
    print(f"  {'span':<52} {'count':>6} {'total s':>9} {'mean s':>8}")
    for name, durations in totals.items():
        indent = "    " if name.startswith("test:") else "  "
        print(f"{indent}{name:<{54 - len(indent)}} {len(durations):>6} {sum(durations):>9.2f} "
              f"{sum(durations) / len(durations):>8.2f}")
    tests = sum(sum(totals.get(name, [])) for name in TEST_SPANS)
    tests_count = len(totals.get("test: call", []))
    parallel = max(1, len({span["pid"] for span in spans if span["span"] == "test: call"}))
    beyond = wall - tests / parallel
    print(f"  {tests_count} test(s): {tests:.2f} s of setup, call and teardown over {parallel} process(es); "
          f"beyond the tests: {beyond:.2f} s of {wall:.1f} s wall")
    return beyond


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="winsuite", help="embedded cluster (started if not running)")
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--one", default=ONE_TEST, help="the one-test run's test (Python regex over full names)")
    parser.add_argument("--only", default=SET_35, help="the set's tests (Python regex over the upstream twins)")
    args = parser.parse_args()
    cluster = LocalCluster(name=args.name)
    cluster.connect()
    cluster.wait_ready(180)
    if not cluster.has_real_node:
        raise SystemExit(f"cluster {args.name} has no real node: the tests need one to run containers")
    one = [name for name in twins() if re.search(args.one, name)][:1]
    many = [name for name in twins() if re.search(args.only, name)]
    if not one or not many:
        raise SystemExit("no test matches --one or --only")
    profile(cluster, one, 1)  # warm-up, not counted: writes the bytecode caches a user's second run finds
    wall, spans, output = profile(cluster, one, 1)
    if not any(span["span"] == "test: call" for span in spans):
        raise SystemExit(f"the one-test run ran no test:\n{output[-3000:]}")
    beyond = table(f"one test ({one[0]}), parallelism 1", wall, spans)
    wall, spans, _ = profile(cluster, many, args.parallelism)
    table(f"{len(many)} tests, parallelism {args.parallelism}", wall, spans)
    met = beyond <= GOAL_FIXED_SECONDS
    print(f"\ngoal (one-test run <= {GOAL_FIXED_SECONDS:.0f} s beyond the test): "
          f"{'met' if met else 'MISSED'} ({beyond:.2f} s)")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
