"""Reference run: upstream e2e.test (built from the pinned Kubernetes) on the embedded cluster.

Runs a handful of `[NodeConformance] [Conformance]` specs against the real node with the embedded repo list
(KUBE_TEST_REPO_LIST), prints the wall time and each spec's verdict, and exits 1 unless all passed. This is
the side-by-side reference for winsuite's own speed and verdicts on the same cluster.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from winsuite.cluster.embedded import LocalCluster
from winsuite.cluster.embedded.realnode.containerd import Containerd
from winsuite.cluster.embedded.realnode.containerd import image_names
from winsuite.components import images
from winsuite.components.progress import stderr_reporter
from winsuite.inputs.pins import load_pins
from winsuite.run.engines.upstream import NON_BLOCKING_TAINTS as ENGINE_NON_BLOCKING_TAINTS
from winsuite.run.engines.upstream_toolchain import built_e2e_test

SPECS = (
    "[sig-node] Pods should get a host IP [NodeConformance] [Conformance]",
    "[sig-node] Pods should be submitted and removed [NodeConformance] [Conformance]",
    "[sig-storage] ConfigMap should be consumable from pods in volume [NodeConformance] [Conformance]",
    "[sig-node] Probing container with readiness probe should not be ready before initial delay "
    "and never restart [NodeConformance] [Conformance]",
    "[sig-node] Kubelet when scheduling a busybox command in a pod should print the output to logs "
    "[NodeConformance] [Conformance]",
    "[sig-node] Downward API should provide pod name, namespace and IP address as env vars "
    "[NodeConformance] [Conformance]",
)
# Simulated nodes are tainted on purpose (and Windows ones carry os=windows); upstream would otherwise wait up to
# 30 min for them.
NON_BLOCKING_TAINTS = ",".join((*ENGINE_NON_BLOCKING_TAINTS, "os"))


def e2e_binary() -> Path:
    return built_e2e_test(load_pins().kubernetes, stderr_reporter)


def missing_images(e2e: Path, env: dict[str, str], node: Containerd) -> list[str]:
    """Images e2e.test may use (with the repo list) that the real node does not have."""
    listed = subprocess.run([str(e2e), "--list-images"], env=env, capture_output=True, text=True, check=True)
    present = set(image_names(node))
    return sorted(name for name in listed.stdout.split() if name not in present)


def verdicts(report_dir: Path) -> dict[str, str]:
    """Spec -> status, from the JUnit that ginkgo writes (names carry an `[It] ` prefix there)."""
    found = {}
    for junit in report_dir.glob("junit*.xml"):
        for case in ET.parse(junit).getroot().iter("testcase"):
            name = case.get("name", "").removeprefix("[It] ")
            if name in SPECS:
                found[name] = case.get("status", "unknown")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="winsuite", help="embedded cluster to use (started if not running)")
    args = parser.parse_args()

    e2e = e2e_binary()
    cluster = LocalCluster(name=args.name)
    cluster.connect()
    try:
        cluster.wait_ready(180)
        state = cluster.state()
        if state.real_node is None:
            print(f"cannot run: cluster {args.name} has no real node ({state.real_node_reason})")
            return 2
        env = dict(os.environ, KUBE_TEST_REPO_LIST=str(images.repo_list_file()))
        absent = missing_images(e2e, env, Containerd(cluster.layout.node / "containerd"))
        print(
            f"images e2e.test may use but the node lacks: {len(absent)} (specs needing them are not run here)"
        )
        with tempfile.TemporaryDirectory(prefix="winsuite-e2e-") as report_dir:
            argv = [
                str(e2e),
                f"--kubeconfig={cluster.kubeconfig_path()}",
                f"--kubectl-path={state.bins['kubectl']}",
                "--provider=skeleton",
                f"--non-blocking-taints={NON_BLOCKING_TAINTS}",
                f"--report-dir={report_dir}",
                # Unanchored: ginkgo's spec text does not start where the listed name does.
                f"--ginkgo.focus={'|'.join(re.escape(spec) for spec in SPECS)}",
                "--ginkgo.no-color",
            ]
            started = time.monotonic()
            log = Path(report_dir) / "e2e.log"
            with log.open("w") as out:
                code = subprocess.run(
                    argv, env=env, stdout=out, stderr=subprocess.STDOUT, check=False
                ).returncode
            wall = time.monotonic() - started
            results = verdicts(Path(report_dir))
            if code != 0 and not results:
                print(log.read_text()[-3000:])
    finally:
        cluster.close()

    for spec in SPECS:
        print(f"{results.get(spec, 'not run'):<8} {spec}")
    passed = sum(status == "passed" for status in results.values())
    print(f"upstream e2e.test: {passed}/{len(SPECS)} passed in {wall:.1f} s wall time (exit {code})")
    return 0 if passed == len(SPECS) else 1


if __name__ == "__main__":
    sys.exit(main())
