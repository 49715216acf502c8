"""Benchmark: the dashboard of a 500-build x 1,000-test history, `winsuite report` timed whole; output size.

Goals (exit code 1 when one is missed), each figure the median of `--runs` runs (5 by default, every run printed
beside), each run `winsuite report --results ROOT --output DIR` timed whole, from launching a fresh interpreter to its
exit, start-up and imports included (bench.report_process):
- the cold report, no cache file (what the first report of a root does; each run from no cache file), <= 1.5 s;
- the report after one new build added to a cached root (the report at the end of a run; each run from the cache as
  the new build found it), <= 0.3 s;
- the pages within 5 MB;
- the dashboard byte-identical with and without the cache, before and after the new build.
The Failures pages are included. Each goal figure is made by the real command with its defaults, so the KEP plan's
items and the clock are its own.

Printed as information, not goals: the same reports split into load (reading the builds), analysis and render, each
made by a process of its own with a fixed clock (no cache; first report, filling the cache; cached; one new build),
which are also the dashboards compared byte for byte. A tab's figures are computed as its pages first ask for them, so
most of the analysis shows under render. The whole time beyond the split is the interpreter's start and the imports.

The history is made up but shaped like a real one: mostly green, some tests always skipped, a few flaky, a few hard
breaks, a few excluded tests that pass when run; every row that ran says where (`ran-on`: a CI job makes a cluster per
run, so its nodes are named anew in every build, the worst case for the grid), every failure has a class, and failure
messages differ from build to build in pod names, IP addresses and durations, as real ones do. The new build has
failures of its own to cluster.
"""

from __future__ import annotations

import argparse
import filecmp
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.measure import goal_line
from bench.measure import median
from bench.measure import spread
from bench.report_process import ReportTiming
from bench.report_process import measured
from bench.report_process import run_count
from bench.report_process import whole
from bench.report_process import whole_runs
from winsuite_reports.cache import CACHE_FILE
from winsuite_reports.synthetic import write_build
from winsuite_reports.synthetic import write_job

MB = 1024 * 1024
GOAL_COLD_SECONDS = 1.5
GOAL_NEW_BUILD_SECONDS = 0.3
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


JOB = "ci-winsuite-windows"
EVERY = 1800  # seconds between builds


# Failure messages by class, as the runner writes them: what varies between occurrences is filled in per build.
FAILURES = {
    "test": ("test: expected pod {ns}/{pod} to be Running within {duration}, found Pending",
             "test: service {ns}/svc-{suffix} endpoints: expected {n} ready addresses, found {m}",
             "test: GET http://{ip}:8080/hostname returned 503 after {duration}"),
    "infrastructure": ('infrastructure: Failed to pull image "mcr.microsoft.com/windows/servercore:ltsc2022": dial tcp '
                       "{ip}:443: i/o timeout (pod {ns}/{pod})",
                       "infrastructure: node {node} went NotReady at {time} while pod {ns}/{pod} ran"),
    "timeout": ("timeout: the per-test timeout ({duration}) cut the test off while waiting for pod {ns}/{pod}",),
    "setup": ("setup: namespace {ns} did not become Active within {duration}",),
}
CLASS_WEIGHTS = {"test": 60, "infrastructure": 25, "timeout": 10, "setup": 5}


def nodes(build: int, row: int) -> str:
    """Where a row ran in a build: one of the build's two Windows nodes (named anew per build), and for a few
    hybrid tests a Linux node beside it."""
    suffix = f"{(build * 2654435761) % 0x100000:05x}"
    windows = f"capz-{suffix}-md-win-{(row + build) % 2} (windows, 10.0.20348.2227, runtime containerd://1.7.20)"
    hybrid = f", capz-{suffix}-md-0 (linux, runtime containerd://1.7.20)" if row % 20 == 0 else ""
    return windows + hybrid


def failure(row: int, build: int) -> tuple[str, str]:
    """A failure's class and message: the row fails for one cause mostly, its details new every build."""
    rng = random.Random(row * 100_003 + build)
    failure_class = random.Random(row).choices(list(CLASS_WEIGHTS), weights=list(CLASS_WEIGHTS.values()))[0]
    if rng.random() < 0.2:  # now and then a row fails for another cause
        failure_class = rng.choices(list(CLASS_WEIGHTS), weights=list(CLASS_WEIGHTS.values()))[0]
    template = FAILURES[failure_class][random.Random(row).randrange(len(FAILURES[failure_class]))]
    ns = f"row-{row}-{rng.getrandbits(24):06x}"
    pod = f"agnhost-{rng.getrandbits(32):08x}-" + "".join(rng.choices("bcdfghjklmnpqrstvwxz2456789", k=5))
    message = template.format(ns=ns, pod=pod, suffix=rng.getrandbits(16), n=rng.randrange(2, 6), m=rng.randrange(2),
                              ip=f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}",
                              duration=f"{rng.uniform(1, 600):.3f}s", node=f"capz-{rng.getrandbits(20):05x}-md-win-0",
                              time=f"2026-01-{1 + build % 28:02d}T{build % 24:02d}:{row % 60:02d}:07Z")
    return failure_class, message


def write_history(results: Path, builds: int, tests: int, seed: int) -> dict[str, dict[str, str]]:
    """The history; returns the rows' testcase properties (a new build is written with the same)."""
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
    numbers = {name: i for i, name in enumerate(rows)}
    write_job(results, JOB, rows, every=EVERY, properties=properties, metadata=METADATA,
              message_of=lambda name, build: failure(numbers[name], build)[1],
              properties_of=lambda name, build, code: cell_properties(numbers[name], build, code))
    return properties


def cell_properties(row: int, build: int, code: str) -> dict[str, str]:
    """A cell's ran-on, and a failure's class (synthetic writes K as a failed attempt, then a passing one)."""
    found = {"ran-on": nodes(build, row)} if code in "PFKX" else {}
    if code in "FK":
        found["failure-class"] = failure(row, build)[0]
    return found


def line(label: str, timing: ReportTiming) -> str:
    return (f"{label:<16} load {timing.load:5.2f} s   analysis {timing.analysis:5.2f} s   render {timing.render:5.2f} s"
            f"   total {timing.total:5.2f} s   (CPU {timing.cpu:5.2f} s)")


def write_new_build(results: Path, properties: dict[str, dict[str, str]], builds: int) -> None:
    """The build after the newest, with ten new failures of its own."""
    newest = max(int(p.name) for p in (results / JOB).iterdir() if p.is_dir())
    started = int(time.mktime(time.strptime(str(newest), "%Y%m%d%H%M%S"))) - time.timezone + EVERY
    cells = {name: "F" if i % 100 == 7 else "P" for i, name in enumerate(properties)}
    write_build(results / JOB, started, cells, metadata=METADATA,
                properties={name: {**props, **cell_properties(i, builds, cells[name])}
                            for i, (name, props) in enumerate(properties.items())},
                messages={name: failure(i, builds)[1] for i, name in enumerate(properties)})


def goals_met(cold: list[float], added: list[float], size: int, same: bool) -> bool:
    """Prints a line per goal; all met?"""
    checks = [
        (f"cold report whole <= {GOAL_COLD_SECONDS} s", median(cold) <= GOAL_COLD_SECONDS),
        (f"one new build whole <= {GOAL_NEW_BUILD_SECONDS} s", median(added) <= GOAL_NEW_BUILD_SECONDS),
        (f"output <= {GOAL_BYTES // MB} MB", size <= GOAL_BYTES),
        ("identical with and without the cache", same),
    ]
    for goal, met in checks:
        print(goal_line(goal, met))
    return all(met for _, met in checks)


def identical(left: Path, right: Path) -> bool:
    """The two dashboards have the same files with the same bytes."""
    comparison = filecmp.dircmp(left, right)
    pending = [comparison]
    while pending:
        current = pending.pop()
        if current.left_only or current.right_only or current.funny_files:
            return False
        _, mismatch, errors = filecmp.cmpfiles(current.left, current.right, current.common_files, shallow=False)
        if mismatch or errors:
            return False
        pending.extend(current.subdirs.values())
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", type=int, default=500)
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=116)
    parser.add_argument("--runs", type=run_count, default=5,
                        help="runs of each report a goal is set for (its figure: the median)")
    parser.add_argument(
        "--keep", type=Path, help="write the history and the pages here (default: a temp dir)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = args.keep or Path(scratch)
        results = base / "results"
        began = time.perf_counter()
        properties = write_history(results, args.builds, args.tests, args.seed)
        written = time.perf_counter() - began
        print(f"history: {args.builds} builds x {args.tests} tests, written in {written:.1f} s")
        now = time.time()
        uncached = measured(results, base / "report-no-cache", cache=False, now=now)
        (results / CACHE_FILE).unlink(missing_ok=True)
        first = measured(results, base / "report-first", cache=True, now=now)
        cached = measured(results, base / "report-cached", cache=True, now=now)
        same = identical(base / "report-no-cache", base / "report-cached")
        whole(results, base / "report-warm-up")  # unmeasured: bytecode written, the interpreter paged in

        def cold_state() -> None:
            (results / CACHE_FILE).unlink(missing_ok=True)
            shutil.rmtree(base / "report-cold", ignore_errors=True)

        cold = whole_runs(results, base / "report-cold", runs=args.runs, reset=cold_state)
        write_new_build(results, properties, args.builds)
        found = base / "cache-the-new-build-found"  # each run finds the cache as the first one did
        shutil.copyfile(results / CACHE_FILE, found)

        def as_found() -> None:
            shutil.copyfile(found, results / CACHE_FILE)
            shutil.rmtree(base / "report-new-build", ignore_errors=True)

        added = whole_runs(results, base / "report-new-build", runs=args.runs, reset=as_found)
        shutil.copyfile(found, results / CACHE_FILE)  # the split report of the new build meets it as found too
        added_split = measured(results, base / "report-new-build-split", cache=True, now=now)
        measured(results, base / "report-new-build-no-cache", cache=False, now=now)
        same = same and identical(base / "report-new-build-no-cache", base / "report-new-build-split")

        print("in-process split (information; a fresh process each, start-up and imports not counted):")
        print(line("no cache", uncached))
        print(line("first report", first))
        print(line("cached", cached))
        print(line("one new build", added_split))
        print("winsuite report, whole (launch to exit, start-up and imports included):")
        print(f"{'cold, no cache':<16} {median(cold):5.2f} s   ({spread(cold)})")
        print(f"{'one new build':<16} {median(added):5.2f} s   ({spread(added)})")
        files = [path for path in (base / "report-new-build").rglob("*") if path.is_file()]
        size = sum(path.stat().st_size for path in files)
        largest = max(files, key=lambda path: path.stat().st_size)
        largest_mb = largest.stat().st_size / MB
        print(f"output: {len(files)} files, {size / MB:.2f} MB (largest {largest.name}: {largest_mb:.2f} MB)")
        print(f"dashboard with and without the cache (before and after the new build): "
              f"{'byte-identical' if same else 'DIFFERENT'}")
        return 0 if goals_met(cold, added, size, same) else 1


if __name__ == "__main__":
    sys.exit(main())
