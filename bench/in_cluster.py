"""Wall time of one focus run here, inside the cluster in 1 shard, and in 2 shards; the planner's expected shard
durations against the measured ones.

Same embedded cluster (real Linux node), same focus, same parallelism per process, native engine, target OS linux.
A first run here (not counted) writes the record of durations the shard planner cuts by, and the image is made
before the timed runs, so the figures are of the runs themselves. A shard's measured time is its own build's
started-to-finished span (artifacts/shards/NN/: connecting, collecting and running its tests with the job's
parallelism); the expected one is the planner's sum of its tests' recorded durations, and that sum over the workers.
Each wall time is one `winsuite run` timed whole (launch to exit, start-up and imports included).

Goal (exit code 1 when missed), the one stated for in-cluster runs (issue 17; kept by issue 26): the run inside the
cluster, in 1 shard and in 2, gives the same rows and verdicts as the same focus run here, every shard's build
received. No goal is stated for the wall times: they are printed as information.

Usage: python -m bench.in_cluster [--focus REGEX] [--name CLUSTER] [--parallelism N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.measure import goal_line
from bench.measure import user_env
from winsuite_reports.results import load_history

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FOCUS = (r"\[sig-node\] (Pods|Downward API|ConfigMap|Secrets|Containers|Kubelet|Variable Expansion)"
                 r"|\[sig-storage\] Downward API")


def winsuite(*args: str) -> list[str]:
    return [sys.executable, "-m", "winsuite.cli", *args]


def timed_run(selection: list[str], root: Path, *extra: str) -> tuple[float, Path, int]:
    started = time.monotonic()
    done = subprocess.run(winsuite("run", *selection, "--results-root", str(root), *extra), cwd=ROOT,
                          env=user_env(), capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    builds = sorted(p for p in root.glob("*/*") if (p / "finished.json").is_file())
    if not builds:
        sys.exit(f"no build written; winsuite said:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall, builds[-1], done.returncode


def verdict_line(build: Path) -> str:
    finished = json.loads((build / "finished.json").read_text())
    return f"{finished['result']}"


def verdicts(build: Path) -> dict[str, str]:
    """Row -> verdict of a build, as `winsuite report` reads it (a merged build's shard copies are not rows)."""
    (job,) = load_history(build, cache=False).jobs
    return {row: cell.status.name for row, cell in job.builds[0].cells.items()}


def shard_spans(build: Path) -> list[float]:
    """Each shard's started-to-finished span; NaN for a shard lost before it sent its build (only its pod log)."""
    spans = []
    for shard in sorted((build / "artifacts" / "shards").iterdir()):
        ends = [shard / "started.json", shard / "finished.json"]
        if not all(end.is_file() for end in ends):
            spans.append(float("nan"))
            continue
        started, finished = (json.loads(end.read_text())["timestamp"] for end in ends)
        spans.append(float(finished - started))
    return spans


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--focus", default=DEFAULT_FOCUS)
    parser.add_argument("--name", default="winsuite", help="the embedded cluster (started when not running)")
    parser.add_argument("--parallelism", default="2")
    args = parser.parse_args()
    selection = ["--cluster-name", args.name, "--node-os", "linux", "--engine", "native", "--focus", args.focus,
                 "-n", args.parallelism]
    for step in (("cluster", "up", "--name", args.name), ("image", "build", "--cluster-name", args.name)):
        subprocess.run(winsuite(*step), cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory(prefix="winsuite-bench-") as scratch:
        root = Path(scratch)
        timed_run(selection, root / "warm-up")  # bytecode caches, and the record of durations the planner uses
        rows = [("here", *timed_run(selection, root / "local"))]
        rows.append(("in-cluster, 1 shard", *timed_run(selection, root / "one", "--in-cluster", "--shards", "1")))
        rows.append(("in-cluster, 2 shards", *timed_run(selection, root / "two", "--in-cluster", "--shards", "2")))
        print(f"focus {args.focus!r}, parallelism {args.parallelism} per process, native engine, target OS linux")
        print(f"{'run':<22} {'wall':>8}  result")
        found = {label: verdicts(build) for label, _, build, _ in rows}
        for label, wall, build, _ in rows:
            print(f"{label:<22} {wall:7.1f}s  {verdict_line(build)}, {len(found[label])} rows")
        measured = shard_spans(rows[2][2])
        finished = json.loads((rows[2][2] / "finished.json").read_text())
        expected = finished["metadata"]["in-cluster"]["expected-seconds"]
        workers = int(args.parallelism)
        print(f"\nshard  expected: its tests' durations, summed and / {workers} workers   measured: the shard's build")
        for number, (plan, real) in enumerate(zip(expected, measured, strict=False), start=1):
            print(f"{number}/2    {plan:8.1f}s  {plan / workers:8.1f}s                    {real:8.1f}s")
        if len(expected) == len(measured) == 2:
            print(f"imbalance: expected {abs(expected[0] - expected[1]):.1f}s, "
                  f"measured {abs(measured[0] - measured[1]):.1f}s")
    here = found.pop("here")
    differing = [(label, row, here.get(row, "no row"), there.get(row, "no row"))
                 for label, there in found.items() for row in sorted(here.keys() | there.keys())
                 if here.get(row) != there.get(row)]
    for label, row, ours, theirs in differing:
        print(f"{label}: {row}: {ours} here, {theirs} in the cluster")
    met = not differing
    print(goal_line("in-cluster runs, 1 and 2 shards: the same rows and verdicts as the run here", met))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
