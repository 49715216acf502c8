"""Benchmark: the upstream engine's overhead over ginkgo + e2e.test run by hand, on the same cluster and specs.

For one focus (default: 33 conformance specs that pass on the embedded cluster, most without a native port, one of
them four minutes of pod updates:
winsuite's cost is fixed, some seconds, so a run of a few specs shows it larger), on the embedded cluster's real node,
at the same parallelism, one after the other: ginkgo --procs=N e2e.test directly; `winsuite run --engine upstream`;
`winsuite run --engine auto` (native ports where winsuite has them). Prints each wall time and verdict list.
Goal: winsuite --engine upstream within 5 % of ginkgo's wall time, with the same verdicts; exit 1 otherwise.

Usage: python -m bench.upstream_engine [--parallelism N] [--name CLUSTER] [--focus RE] [--skip RE]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

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
    subprocess.run(argv, cwd=ROOT, capture_output=True, check=False)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--name", default="winsuite", help="embedded cluster (started if not running)")
    parser.add_argument("--focus", default=FOCUS)
    parser.add_argument("--skip", default=BOTH_FAIL,
                        help="default: the specs that fail for both on the embedded cluster's images; add "
                             "'issue 500 podspec updates' for a short run")
    args = parser.parse_args()
    cluster = LocalCluster(name=args.name)
    cluster.connect()
    cluster.wait_ready(300)
    with tempfile.TemporaryDirectory(prefix="winsuite-bench-") as scratch:
        work = Path(scratch)
        for sub in ("ginkgo", "upstream", "auto"):
            (work / sub).mkdir()
        raw_time, raw = ginkgo_run(cluster, args.focus, args.skip, args.parallelism, work / "ginkgo")
        up_time, up = winsuite_run(cluster, args.focus, args.skip, args.parallelism, "upstream", work / "upstream")
        auto_time, auto = winsuite_run(cluster, args.focus, args.skip, args.parallelism, "auto", work / "auto")
    print(f"{len(raw)} specs, parallelism {args.parallelism}, embedded cluster {cluster.name}")
    print(f"{'spec':<90} {'ginkgo':<8} {'upstream':<20} auto")
    for name in sorted(raw):
        print(f"{name[:90]:<90} {raw[name]:<8} {up.get(name, '-'):<20} {auto.get(name, '-')}")
    overhead = up_time / raw_time - 1
    print(f"wall time: ginkgo + e2e.test {raw_time:.1f} s; winsuite --engine upstream {up_time:.1f} s "
          f"({overhead:+.1%}); winsuite --engine auto {auto_time:.1f} s")
    same = all(up.get(name, "").split()[0:1] == [verdict] for name, verdict in raw.items()) and len(up) == len(raw)
    print(f"same verdicts (upstream engine vs ginkgo): {'yes' if same else 'NO'}")
    met = same and overhead <= GOAL_OVERHEAD
    print(f"goal (overhead ≤ {GOAL_OVERHEAD:.0%}, same verdicts): {'met' if met else 'missed'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
