"""winsuite vs upstream e2e.test on the same cluster: the adapted tests that have upstream twins, side by side.

Same cluster (the embedded one, real Linux node), same parallelism, same focus (the twins' exact names).
Prints both wall times and both verdict lists. Upstream runs in parallel through the ginkgo CLI of the
version e2e.test was built with (installed from the Go module proxy into winsuite's cache).
Where verdicts differ, the usual causes are the embedded cluster's images (test_images/README-embedded.md says how
each differs from upstream's) and capabilities the cluster lacks, which winsuite skips with a reason and upstream
fails on.

The ratio compares the same work: when the verdicts differ, both run again on the tests both passed, and the
ratio is taken from that second round; with no test passed by both there is no ratio to give (exit 1). Both are
measured warm, the same way, as on a job's second run: one run of each over the same tests and parallelism first (not
counted) writes winsuite's Python bytecode caches and its record of the tests' durations (a parallel phase starts the
longest first) and pages e2e.test and ginkgo in; winsuite runs with Python's default bytecode caching even where the
environment sets PYTHONDONTWRITEBYTECODE. A missed goal exits 1.

Usage: python bench/compare_upstream.py [--parallelism N] [--name CLUSTER] [--only REGEX]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from bench.measure import user_env
from bench.upstream_e2e import NON_BLOCKING_TAINTS
from bench.upstream_e2e import e2e_binary
from winsuite.cluster.embedded import LocalCluster
from winsuite.components import images
from winsuite.inputs.pins import load_pins
from winsuite.policy.catalog import collect
from winsuite.run.engines import upstream_toolchain
from winsuite.run.engines.upstream_toolchain import ginkgo_version_for

ROOT = Path(__file__).resolve().parents[1]
GOAL_RATIO = 0.7  # winsuite's wall time over upstream's on the same tests, same parallelism


def twins() -> list[str]:
    return sorted({e.spec.twin for e in collect() if e.spec.twin and e.module.startswith("winsuite.cases.adapted")})


def ginkgo_binary() -> Path:
    """The ginkgo CLI of the version e2e.test's release requires (as the upstream engine uses it)."""
    version = ginkgo_version_for(load_pins().kubernetes)
    return upstream_toolchain.ginkgo_binary(version, lambda line: print(line, file=sys.stderr))


def junit_verdicts(root: Path, names: list[str]) -> dict[str, str]:
    """Name -> the last attempt's status, from every junit*.xml under root (`[It] ` prefix removed)."""
    wanted = set(names)
    found: dict[str, str] = {}
    for junit in sorted(root.rglob("junit*.xml")):
        for case in ET.parse(junit).getroot().iter("testcase"):
            name = case.get("name", "").removeprefix("[It] ")
            if name not in wanted:
                continue
            failed = case.find("failure") is not None or case.find("error") is not None
            skipped = case.find("skipped") is not None
            found[name] = "failed" if failed else "skipped" if skipped else "passed"
    return found


def focus_of(names: list[str]) -> str:
    """Unanchored alternatives of the exact names: ginkgo matches "Kubernetes e2e suite <name>"."""
    return "|".join(re.escape(n).replace("\\ ", " ") for n in names)


def run_winsuite(
    cluster: LocalCluster, names: list[str], parallelism: int, work: Path
) -> tuple[float, dict[str, str]]:
    results = work / "winsuite"
    argv = [sys.executable, "-m", "winsuite.cli", "run", "--cluster-name", cluster.name, "--node-os", "linux",
            "--focus", focus_of(names), "-n", str(parallelism), "--results-root", str(results)]
    started = time.monotonic()
    subprocess.run(argv, cwd=ROOT, env=user_env(), capture_output=True, check=False)
    return time.monotonic() - started, junit_verdicts(results, names)


def run_upstream(
    cluster: LocalCluster, names: list[str], parallelism: int, work: Path
) -> tuple[float, dict[str, str]]:
    report = work / "upstream"
    report.mkdir()
    focus = focus_of(names)
    state = cluster.state()
    argv = [str(ginkgo_binary()), f"--procs={parallelism}", "--no-color", str(e2e_binary()), "--",
            f"--kubeconfig={cluster.kubeconfig_path()}", f"--kubectl-path={state.bins['kubectl']}",
            "--provider=skeleton", f"--non-blocking-taints={NON_BLOCKING_TAINTS}", f"--report-dir={report}",
            f"--ginkgo.focus={focus}"]
    env = dict(os.environ, KUBE_TEST_REPO_LIST=str(images.repo_list_file()))
    started = time.monotonic()
    with (report / "e2e.log").open("w") as log:
        subprocess.run(argv, env=env, stdout=log, stderr=subprocess.STDOUT, check=False)
    return time.monotonic() - started, junit_verdicts(report, names)


def compare(cluster: LocalCluster, names: list[str], parallelism: int,
            work: Path) -> tuple[float, dict[str, str], float, dict[str, str]]:
    """One run of each over `names`; prints both wall times and verdict counts."""
    work.mkdir()
    ours_wall, ours = run_winsuite(cluster, names, parallelism, work)
    theirs_wall, theirs = run_upstream(cluster, names, parallelism, work)
    for label, wall, verdicts in (("winsuite", ours_wall, ours), ("e2e.test", theirs_wall, theirs)):
        counts = {v: sum(1 for x in verdicts.values() if x == v) for v in ("passed", "failed", "skipped")}
        print(f"{label}: {wall:.1f} s wall; {counts['passed']} passed, {counts['failed']} failed, "
              f"{counts['skipped']} skipped, {len(names) - len(verdicts)} not run")
    return ours_wall, ours, theirs_wall, theirs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--name", default="winsuite", help="embedded cluster (started if not running)")
    parser.add_argument("--only", default="", help="compare only the twins whose names match (Python regex)")
    args = parser.parse_args()
    if shutil.which("go") is None:
        raise SystemExit("needs Go on PATH to build e2e.test and the ginkgo CLI")
    names = [name for name in twins() if re.search(args.only, name)]
    cluster = LocalCluster(name=args.name)
    cluster.connect()
    cluster.wait_ready(180)
    if not cluster.has_real_node:
        raise SystemExit(f"cluster {args.name} has no real node; both suites need one to run containers")
    print(f"{len(names)} adapted tests with upstream twins, parallelism {args.parallelism}"
          + (" (those matching --only)" if args.only else ""))
    with tempfile.TemporaryDirectory(prefix="winsuite-compare-") as tmp:
        # Warm-up, not counted, the same for both: each over the same tests at the same parallelism.
        run_winsuite(cluster, names, args.parallelism, Path(tempfile.mkdtemp(dir=tmp)))
        run_upstream(cluster, names, args.parallelism, Path(tempfile.mkdtemp(dir=tmp)))
        ours_wall, ours, theirs_wall, theirs = compare(cluster, names, args.parallelism, Path(tmp) / "all")
        print(f"{'winsuite':<10} {'e2e.test':<10} test")
        for name in names:
            print(f"{ours.get(name, 'not run'):<10} {theirs.get(name, 'not run'):<10} {name}")
        both = [name for name in names if ours.get(name) == theirs.get(name) == "passed"]
        same = sum(ours.get(n) == theirs.get(n) for n in names)
        print(f"same verdict on {same} of {len(names)} tests; both passed {len(both)}")
        if not both:
            print("no test passed on both sides: there is no common work to compare, so no ratio")
            return 1
        if len(both) != len(names):
            print(f"\nagain, on the {len(both)} tests both passed (the same work for both):")
            ours_wall, ours, theirs_wall, theirs = compare(cluster, both, args.parallelism, Path(tmp) / "both")
            names = both
    passed_by_both = sum(ours.get(n) == theirs.get(n) == "passed" for n in names)
    if not passed_by_both or not theirs_wall:
        print("no test passed on both sides in the second round: no ratio")
        return 1
    ratio = ours_wall / theirs_wall
    met = ratio <= GOAL_RATIO
    print(f"winsuite / e2e.test wall time on {len(names)} tests ({passed_by_both} passed by both): {ratio:.2f}x; "
          f"goal <= {GOAL_RATIO:.2f}x: {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
