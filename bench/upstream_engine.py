"""Benchmark: the upstream engine's overhead over ginkgo + e2e.test run by hand, on the same cluster and specs.

For one focus (default: 33 conformance specs that pass on the embedded cluster, most without a native port, one of
them four minutes of pod updates:
winsuite's cost is fixed, some seconds, so a run of a few specs shows it larger), on the embedded cluster's real node,
at the same parallelism: ginkgo --procs=N e2e.test directly, and `winsuite run --engine upstream`, each run timed whole
(launch to exit). Both are warmed alike, one unmeasured run of each first (bytecode caches written, e2e.test and
ginkgo paged in, the record of durations made), then measured in alternating order (A B, B A, A B: `--rounds` runs
of each), each side's figure the median of its runs, every run printed beside. Then one run of
`winsuite run --engine auto` (native ports where winsuite has them), as information. Prints each verdict list.
Goal: winsuite --engine upstream's median within 5 % of ginkgo's, with the same verdicts in every round; exit 1
otherwise.

Usage: python -m bench.upstream_engine [--parallelism N] [--name CLUSTER] [--focus RE] [--skip RE] [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from bench.measure import alternating
from bench.measure import goal_line
from bench.measure import median
from bench.measure import spread
from bench.measure import user_env
from winsuite.cluster.embedded import LocalCluster
from winsuite.components import images
from winsuite.inputs.pins import load_pins
from winsuite.run.engines.ginkgo_report import spec_name
from winsuite.run.engines.ginkgo_report import spec_reports
from winsuite.run.engines.upstream import NON_BLOCKING_TAINTS
from winsuite.run.engines.upstream_toolchain import resolve

ROOT = Path(__file__).resolve().parents[1]
GOAL_OVERHEAD = 0.05
# Environment-variable specs that fail for ginkgo and winsuite alike on the embedded cluster (Debian busybox's env
# drops such names): the comparison is over work both pass.
BOTH_FAIL = r"consumable via the environment|environment variable names with various prefixes"
FOCUS = (r"\[sig-node\] (PodTemplates|Lease|RuntimeClass|Pods Extended|Secrets|ConfigMap) .*\[Conformance\]"
         r"|\[sig-node\] Pods should (get a host IP|be submitted and removed|run through the lifecycle)"
         r"|\[sig-api-machinery\] (Servers with support for Table|Discovery|Namespaces \[Serial\]) .*\[Conformance\]")


def ginkgo_run(cluster: LocalCluster, focus: str, skip: str, procs: int, work: Path) -> tuple[float, dict[str, str]]:
    toolchain = resolve(None, load_pins().kubernetes, lambda line: print(line, file=sys.stderr))
    argv = [str(toolchain.ginkgo), f"--procs={procs}", "--no-color", "--silence-skips", "--json-report=report.json",
            f"--output-dir={work}", f"--focus={focus}", *([f"--skip={skip}"] if skip else []),
            str(toolchain.e2e_test), "--",
            f"--kubeconfig={cluster.kubeconfig_path()}", "--provider=skeleton",
            f"--non-blocking-taints={','.join(NON_BLOCKING_TAINTS)},os"]
    env = dict(os.environ, KUBE_TEST_REPO_LIST=str(images.repo_list_file()))
    started = time.monotonic()
    subprocess.run(argv, cwd=work, env=env, capture_output=True, check=False)
    took = time.monotonic() - started
    return took, {spec_name(r): "passed" if r["State"] == "passed" else "failed"
                  for r in spec_reports(work / "report.json") if r["State"] != "skipped"}


def winsuite_run(cluster: LocalCluster, focus: str, skip: str, procs: int, engine: str, work: Path
                 ) -> tuple[float, dict[str, str]]:
    argv = [sys.executable, "-m", "winsuite.cli", "run", "--job", "embedded-linux", "--cluster-name", cluster.name,
            "--engine", engine, "--focus", focus, *(["--skip", skip] if skip else []), "-n", str(procs),
            "--results-root", str(work)]
    started = time.monotonic()
    subprocess.run(argv, cwd=ROOT, env=user_env(), capture_output=True, check=False)
    took = time.monotonic() - started
    verdicts = {}
    for junit in work.rglob("junit_0*.xml"):
        if junit.parent.name != "artifacts":
            continue
        for case in ET.parse(junit).getroot().iter("testcase"):
            failed = case.find("failure") is not None
            skipped = case.find("skipped") is not None
            engine_of = {p.get("name"): p.get("value") for p in case.iter("property")}.get("engine", "")
            verdicts[case.get("name", "").removeprefix("[It] ")] = (
                ("failed" if failed else "skipped" if skipped else "passed") + (f" ({engine_of})" if engine_of else ""))
    return took, verdicts


Side = Callable[[Path], tuple[float, dict[str, str]]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--name", default="winsuite", help="embedded cluster (started if not running)")
    parser.add_argument("--focus", default=FOCUS)
    parser.add_argument("--skip", default=BOTH_FAIL,
                        help="default: the specs that fail for both on the embedded cluster's images; add "
                             "'issue 500 podspec updates' for a short run")
    parser.add_argument("--rounds", type=int, default=3, help="measured runs of each side (the figure: the median)")
    args = parser.parse_args()
    cluster = LocalCluster(name=args.name)
    cluster.connect()
    cluster.wait_ready(300)
    sides: dict[str, Side] = {
        "ginkgo": lambda work: ginkgo_run(cluster, args.focus, args.skip, args.parallelism, work),
        "upstream": lambda work: winsuite_run(cluster, args.focus, args.skip, args.parallelism, "upstream", work),
    }
    runs: dict[str, list[tuple[float, dict[str, str]]]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory(prefix="winsuite-bench-") as scratch:
        work = Path(scratch)
        for side, run in sides.items():  # warm-up, not counted: each side once, in the order the rounds start
            (work / f"{side}-warm-up").mkdir()
            run(work / f"{side}-warm-up")
        for number, side in enumerate(alternating(list(sides), args.rounds)):
            (work / f"{side}-{number}").mkdir()
            runs[side].append(sides[side](work / f"{side}-{number}"))
        (work / "auto").mkdir()
        auto_time, auto = winsuite_run(cluster, args.focus, args.skip, args.parallelism, "auto", work / "auto")
    raw, up = runs["ginkgo"][0][1], runs["upstream"][0][1]
    print(f"{len(raw)} specs, parallelism {args.parallelism}, embedded cluster {cluster.name}; verdicts of round 1")
    print(f"{'spec':<90} {'ginkgo':<8} {'upstream':<20} auto")
    for name in sorted(raw):
        print(f"{name[:90]:<90} {raw[name]:<8} {up.get(name, '-'):<20} {auto.get(name, '-')}")
    walls = {side: [took for took, _ in found] for side, found in runs.items()}
    overhead = median(walls["upstream"]) / median(walls["ginkgo"]) - 1
    print(f"wall time: ginkgo + e2e.test {median(walls['ginkgo']):.1f} s ({spread(walls['ginkgo'])}); "
          f"winsuite --engine upstream {median(walls['upstream']):.1f} s ({spread(walls['upstream'])}), "
          f"{overhead:+.1%}; winsuite --engine auto {auto_time:.1f} s (one run, information)")
    same = all(same_verdicts(ginkgo, upstream)
               for (_, ginkgo), (_, upstream) in zip(runs["ginkgo"], runs["upstream"], strict=True))
    print(f"same verdicts (upstream engine vs ginkgo, every round): {'yes' if same else 'NO'}")
    met = same and overhead <= GOAL_OVERHEAD
    print(goal_line(f"median overhead <= {GOAL_OVERHEAD:.0%}, same verdicts", met))
    return 0 if met else 1


def same_verdicts(ginkgo: dict[str, str], upstream: dict[str, str]) -> bool:
    """The upstream engine's rows are ginkgo's specs with ginkgo's verdicts (its engine note aside)."""
    return len(upstream) == len(ginkgo) and all(
        upstream.get(name, "").split()[0:1] == [verdict] for name, verdict in ginkgo.items())


if __name__ == "__main__":
    sys.exit(main())
