"""Benchmark: the dashboard of a 500-build x 1,000-test history; prints load and render times, output size.

Goal: render (analysis + pages, from the loaded history) within 3 s and all pages within 5 MB; the exit
code is 1 when a goal is missed. Loading (parsing the JUnit files) is timed and printed separately.
The history is made up but shaped like a real one: mostly green, some tests always skipped, a few flaky,
a few hard breaks, a few excluded tests that pass when run.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

from winsuite_reports.analysis import ReportOptions
from winsuite_reports.analysis import build_report
from winsuite_reports.render import write_dashboard
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import write_job

MB = 1024 * 1024
GOAL_SECONDS = 3.0
GOAL_BYTES = 5 * MB
TIERS = ("adapted", "substitute", "windows-specific", "api-compatibility")
CATEGORIES = ("Core.Pods", "Core.Network", "Core.Storage", "Core.Scheduling", "Core.Security", "Extended.HPA")
METADATA = {
    "dashboard": "sig-windows-signal",
    "release-blocking": True,
    "kubernetes-version": "v1.36.3",
    "windows-builds": "10.0.17763,10.0.20348",
    "container-runtime": "containerd://1.7.20",
}


def history_rows(builds: int, tests: int, rng: random.Random) -> dict[str, str]:
    """Cell codes per test, newest build first (see reports.synthetic)."""
    rows = {}
    for i in range(tests):
        name = f"[sig-windows] Area {i % 40} should behave as case {i} on the target OS [Conformance]"
        kind = rng.random()
        if kind < 0.02:
            codes = "S" * builds
        elif kind < 0.025:
            codes = "X" * builds
        elif kind < 0.075:
            codes = "".join(rng.choices("PFK", weights=(90, 5, 5), k=builds))
        elif kind < 0.085:
            start = rng.randrange(builds)
            codes = "".join("F" if start <= b < start + 20 else "P" for b in range(builds))
        else:
            codes = "".join("F" if rng.random() < 0.002 else "P" for _ in range(builds))
        rows[name] = codes
    return rows


def write_history(results: Path, builds: int, tests: int, seed: int) -> None:
    rng = random.Random(seed)
    rows = history_rows(builds, tests, rng)
    properties = {
        name: {
            "tags": "Conformance",
            "tier": rng.choice(TIERS),
            "category": rng.choice(CATEGORIES),
            "diagnostics": f"artifacts/case-{i}/",
        }
        for i, name in enumerate(rows)
    }
    write_job(results, "ci-winsuite-windows", rows, every=1800, properties=properties, metadata=METADATA)


def measure(results: Path, output: Path) -> tuple[float, float, float]:
    """Seconds to load, to analyse and to write the pages."""
    began = time.perf_counter()
    history = load_history(results)
    loaded = time.perf_counter()
    report = build_report(history, ReportOptions(), now=time.time())
    analysed = time.perf_counter()
    write_dashboard(report, output)
    return loaded - began, analysed - loaded, time.perf_counter() - analysed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--builds", type=int, default=500)
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=116)
    parser.add_argument(
        "--keep", type=Path, help="write the history and the pages here (default: a temp dir)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = args.keep or Path(scratch)
        began = time.perf_counter()
        write_history(base / "results", args.builds, args.tests, args.seed)
        written = time.perf_counter() - began
        print(f"history: {args.builds} builds x {args.tests} tests, written in {written:.1f} s")
        load, analysis, pages = measure(base / "results", base / "report")
        files = [path for path in (base / "report").rglob("*") if path.is_file()]
        size = sum(path.stat().st_size for path in files)
        largest = max(files, key=lambda path: path.stat().st_size)
        print(f"load: {load:.2f} s (parsing {args.builds} JUnit files)")
        print(f"render: {analysis + pages:.2f} s (analysis {analysis:.2f} s, pages {pages:.2f} s)")
        largest_mb = largest.stat().st_size / MB
        print(f"output: {len(files)} files, {size / MB:.2f} MB (largest {largest.name}: {largest_mb:.2f} MB)")
        met = analysis + pages <= GOAL_SECONDS and size <= GOAL_BYTES
        goal = f"render <= {GOAL_SECONDS:.0f} s, output <= {GOAL_BYTES // MB} MB"
        print(f"goal ({goal}): {'met' if met else 'MISSED'}")
        return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
