"""Benchmark: `winsuite report` of one build whose JUnit file holds 100,000 testcases; prints the time to load,
analyse and render it, CPU time beside wall time, and the file's size. Two reports: without the report cache, and
the first report with it (what `winsuite report` does on new results: it parses the build and fills the cache).

Goal (exit code 1 when missed): each whole report (load + analysis + render of the dashboard) in <= 2.0 s, the
median of `--runs` runs of it (each from the same state: the first report's from no cache file). The
testcases are shaped like a big job's: mostly passed, some failed with a message, some skipped with a reason. CPU
time is printed too (a forked page writer's included): on a shared machine the wall time counts what others ran
meanwhile. Each report is made by a process of its own, as `winsuite report` makes one (bench.report_process). A
tab's figures are computed as its pages first ask for them, so most of the analysis shows under render (see
reports.analysis).

    python -m bench.junit_large [--tests 100000] [--runs 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from bench.report_process import measured_runs
from bench.report_process import run_count
from bench.report_render import identical
from winsuite_reports.cache import CACHE_FILE
from winsuite_reports.synthetic import write_build

GOAL_SECONDS = 2.0
STARTED = 1_790_000_000


def cells(tests: int) -> dict[str, str]:
    """Cell codes of one build: 1 in 50 failed, 1 in 20 skipped, the rest passed."""
    return {f"[sig-node] Area {i % 40} should behave as case {i} on the target OS [Conformance]":
            "F" if i % 50 == 0 else "S" if i % 20 == 0 else "P" for i in range(tests)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=100_000)
    parser.add_argument("--runs", type=run_count, default=5, help="runs of each report; the median is its figure")
    parser.add_argument("--keep", type=Path, help="write the build and the pages here (default: a temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = args.keep or Path(scratch)
        results = base / "results"
        build = write_build(results / "ci-winsuite-large", STARTED, cells(args.tests))
        junit = next((results / "ci-winsuite-large" / build).rglob("junit_*.xml"))
        print(f"{args.tests} testcases in one JUnit file of {junit.stat().st_size / 1e6:.1f} MB")
        cache_file = results / CACHE_FILE
        timings = {label: measured_runs(results, base / f"dashboard-{label.replace(' ', '-')}", cache=cache,
                                        now=STARTED + 3600, runs=args.runs,
                                        reset=lambda: cache_file.unlink(missing_ok=True))
                   for label, cache in (("no cache", False), ("first report", True))}
        same = identical(base / "dashboard-no-cache", base / "dashboard-first-report")
    for label, runs in timings.items():
        timing = runs.median
        print(f"{label:<13} load {timing.load:5.2f} s   analysis {timing.analysis:5.2f} s   render "
              f"{timing.render:5.2f} s   total {timing.total:5.2f} s   (CPU {timing.cpu:5.2f} s; {runs.spread})")
    print(f"dashboard with and without the cache: {'byte-identical' if same else 'DIFFERENT'}")
    worst = max(runs.median.total for runs in timings.values())
    met = worst <= GOAL_SECONDS and same
    print(f"goal: a {args.tests}-testcase JUnit file reported in <= {GOAL_SECONDS:.1f} s, with and without the cache: "
          f"{'met' if met else 'MISSED'} (slowest median {worst:.2f} s)")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
