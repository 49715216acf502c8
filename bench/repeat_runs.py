"""Benchmark: the same run N times back to back on the embedded cluster (its real node included); prints per
run the verdicts (same or changed), wall time, winsuite's peak memory, the cluster's memory, and what the run
left behind: namespaces, processes, mounts, iptables chains, network namespaces and listening ports. Exit 1
when a verdict changes or anything is left behind.

    python -m bench.repeat_runs [--runs 10] [--focus RE] [--cluster-name winsuite]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from kubernetes import client

from winsuite.cluster.embedded import LocalCluster
from winsuite.cluster.embedded.leftovers import listeners
from winsuite.cluster.embedded.realnode import iptables
from winsuite.cluster.embedded.realnode import network
from winsuite.cluster.embedded.state import load
from winsuite.cluster.kubeconfig import api_client
from winsuite.k8s.namespaces import RUN_ID_LABEL

ROOT = Path(__file__).resolve().parents[1]
FOCUS = (r"Downward API should provide pod name, namespace and IP address|Pods should get a host IP"
         r"|ConfigMap should be consumable from pods in volume \[NodeConformance\]")


def verdicts(build_root: Path) -> list[tuple[str, str]]:
    rows = []
    for junit in sorted(build_root.rglob("junit_*.xml")):
        for case in ET.parse(junit).getroot().iter("testcase"):
            status = "failed" if case.find("failure") is not None else (
                "skipped" if case.find("skipped") is not None else "passed")
            rows.append((case.get("name", ""), status))
    return sorted(rows)


def host_objects() -> dict[str, int]:
    """Counts of what a run could leave on the host: mounts, chains, network namespaces, listening ports."""
    mounts = sum(1 for _ in Path("/proc/self/mountinfo").read_text().splitlines())
    chains = sum(len(names) for names in iptables.owned_chains().values())
    return {"processes": len([p for p in os.listdir("/proc") if p.isdigit()]), "mounts": mounts,
            "chains": chains, "netns": len(network.netns_names()), "ports": len(listeners())}


def settled_host_objects(quiet: float = 10.0, limit: float = 180.0) -> dict[str, int]:
    """The host's counts once they stop changing: kubelet and kube-proxy add their chains (and CoreDNS's service
    rules) some seconds after a fresh cluster reports ready; those are the cluster's, not a run's."""
    deadline = time.monotonic() + limit
    counts = host_objects()
    steady_since = time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - steady_since < quiet:
        time.sleep(1)
        now = host_objects()
        if any(now[key] != counts[key] for key in ("mounts", "chains", "netns")):
            steady_since = time.monotonic()
        counts = now
    return counts


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--focus", default=FOCUS)
    parser.add_argument("--cluster-name", default="winsuite")
    args = parser.parse_args()

    target = LocalCluster(name=args.cluster_name)
    target.connect()
    target.wait_ready(300)
    state = load(target.layout)
    assert state is not None
    kubeconfig = target.kubeconfig_path()
    core = client.CoreV1Api(api_client(kubeconfig))
    components = {proc.name: proc.pid for proc in state.processes
                  if proc.name in ("kube-apiserver", "kube-controller-manager", "etcd")}
    baseline = settled_host_objects()
    first: list[tuple[str, str]] | None = None
    problems = 0
    print(f"{'run':>4} {'verdicts':>9} {'wall s':>7} {'winsuite MiB':>13} "
          + " ".join(f"{name + ' MiB':>24}" for name in components)
          + f" {'namespaces left':>16} {'terminating':>12} " + " ".join(f"{k + ' +/-':>14}" for k in baseline))
    for index in range(1, args.runs + 1):
        with tempfile.TemporaryDirectory(prefix="winsuite-repeat-") as results:
            started = time.monotonic()
            process = subprocess.Popen(
                [sys.executable, "-m", "winsuite.cli", "run", "--job", "embedded", "--kubeconfig", str(kubeconfig),
                 "--node-os", "linux",
                 "--focus", args.focus, "--results-root", results], cwd=ROOT, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(process.pid, 0)
            process.returncode = os.waitstatus_to_exitcode(status)
            wall = time.monotonic() - started
            rows = verdicts(Path(results))
        first = first if first is not None else rows
        same = rows == first and bool(rows)
        listed = core.list_namespace(label_selector=RUN_ID_LABEL).items
        # A run deletes its namespaces without waiting for the namespace controller: those being deleted are not
        # left behind, but they must not pile up from run to run either.
        left = [ns.metadata.name for ns in listed if ns.metadata.deletion_timestamp is None]
        terminating = len(listed) - len(left)
        now = host_objects()
        delta = {key: now[key] - baseline[key] for key in baseline}
        leak = bool(left) or any(delta[key] != 0 for key in ("mounts", "chains", "netns"))
        problems += (not same) + leak
        digest = hashlib.sha256(repr(rows).encode()).hexdigest()[:8]
        print(f"{index:>4} {digest + ('' if same else '!'):>9} {wall:>7.1f} {usage.ru_maxrss / 1024:>13.1f} "
              + " ".join(f"{rss_mib(pid):>24.1f}" for pid in components.values())
              + f" {len(left):>16} {terminating:>12} " + " ".join(f"{delta[key]:>+14d}" for key in baseline))
    print(f"{args.runs} runs of {len(first or [])} tests: "
          f"{'identical verdicts' if problems == 0 else f'{problems} problem(s)'}; exit codes and rows above "
          f"(processes and ports count the whole host: other programs come and go)")
    return 0 if problems == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
