"""Take the real node apart so that nothing it created remains on the host."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from winsuite.cluster.embedded.realnode import containerd
from winsuite.cluster.embedded.realnode import hostdirs
from winsuite.cluster.embedded.realnode import iptables
from winsuite.cluster.embedded.realnode import kubeproxy
from winsuite.cluster.embedded.realnode import network
from winsuite.cluster.embedded.realnode import nodelogs
from winsuite.cluster.embedded.realnode.node import RealNode
from winsuite.cluster.embedded.state import RealNodeState
from winsuite.components import kube
from winsuite.components.processes import Process
from winsuite.components.processes import adopt
from winsuite.components.processes import alive
from winsuite.components.processes import pids_with_argument
from winsuite.components.processes import stop
from winsuite.components.progress import Reporter
from winsuite.k8s.api_answer import error_line

POD_DELETION_TIMEOUT = 30.0
CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTAINER_LOG_LINKS = Path("/var/log/containers")
NODE_COMPONENTS = ("coredns", "kube-proxy", "kubelet")


def _attempt(problems: list[str], what: str, step: Callable[..., object], *args: Any) -> None:
    """Run one teardown step; a failure is recorded and the remaining steps still run."""
    try:
        step(*args)
    except Exception as err:  # teardown must go on: report every step that failed at the end
        problems.append(f"failed to {what}: {err}")


def stop_workloads(node: RealNode, processes: list[Process], api_up: bool, report: Reporter) -> list[str]:
    """Pods first (the kubelet tears down their network and volumes properly), then the node's daemons."""
    problems: list[str] = []
    if api_up and any(
        proc.name == "kubelet" and alive(proc) for proc in processes
    ):  # else nobody would finish them
        try:
            left = kube.delete_pods_on_node(kube.api(node.layout.kubeconfig), node.name, POD_DELETION_TIMEOUT)
        except Exception as err:  # the API went away meanwhile: best effort, containers are removed directly
            report(f"  could not delete the node's pods through the API ({error_line(err, 160)}); "
                   "removing their containers directly")
            left = []
        if left:
            report(f"  pods the kubelet did not finish in {POD_DELETION_TIMEOUT:.0f}s: {', '.join(left)}")
    for proc in processes:
        if proc.name in NODE_COMPONENTS:
            _attempt(problems, f"stop {proc.name}", _stop_reporting, proc, report)
    runtime = node.containerd
    daemon = next((proc for proc in processes if proc.name == "containerd"), None)
    if daemon is not None:
        _attempt(problems, "remove containers", containerd.remove_all_containers, runtime)
        _attempt(problems, "stop containerd", stop, daemon)
    for pid in pids_with_argument(str(runtime.socket)):  # shims outlive containerd by design
        shim = adopt("containerd-shim", pid)
        if shim is not None:
            _attempt(problems, f"stop shim {pid}", stop, shim, 2.0)
    return problems


def _stop_reporting(proc: Process, report: Reporter) -> None:
    if stop(proc):
        report(f"  {proc.name} (pid {proc.pid}) did not stop on SIGTERM: killed")


def _mount_points() -> list[str]:
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4]
        points.append(point.encode().decode("unicode_escape"))  # \040 and friends
    return points


def unmount_under(prefixes: list[str]) -> list[str]:
    """Unmount everything mounted at or below the prefixes, deepest first; returns what stayed mounted."""
    for _ in range(5):  # mounts may be stacked on the same point
        doomed = sorted(
            (
                p
                for p in _mount_points()
                if any(p == x or p.startswith(x.rstrip("/") + "/") for x in prefixes)
            ),
            key=len,
            reverse=True,
        )
        if not doomed:
            return []
        for point in doomed:
            if subprocess.run(["umount", point], capture_output=True, check=False).returncode != 0:
                subprocess.run(["umount", "-l", point], capture_output=True, check=False)
    return [p for p in _mount_points() if any(p.startswith(x) for x in prefixes)]


def _remove_cgroups() -> None:
    """kubelet's cgroup trees (containers end up outside the caller's cgroup), removed leaves first."""
    for controller in CGROUP_ROOT.iterdir():
        tree = controller / "kubepods"
        if not tree.is_dir():
            continue
        for directory in sorted(
            (d for d in tree.rglob("*") if d.is_dir()), key=lambda d: len(d.parts), reverse=True
        ):
            directory.rmdir()
        tree.rmdir()


def _remove_log_links(pod_logs: Path) -> None:
    if CONTAINER_LOG_LINKS.is_dir():
        for link in CONTAINER_LOG_LINKS.iterdir():
            if link.is_symlink() and os.readlink(link).startswith(str(pod_logs)):
                link.unlink()


def clean_host(node: RealNode, before: RealNodeState, report: Reporter) -> list[str]:
    """After every process is gone: mounts, netns, iptables, bridge, sysctls, cgroups, log links."""
    problems: list[str] = []
    netns = [
        str(network.NETNS_DIR / name) for name in network.netns_names() if name not in before.netns_before
    ]
    stuck = unmount_under([str(node.layout.root), *netns])
    if stuck:
        problems.append(f"still mounted: {', '.join(stuck)}")
    for path in netns:
        _attempt(problems, f"remove {path}", Path(path).unlink, True)
    kube_proxy = node.bins.get("kube-proxy")
    if kube_proxy is not None:
        subprocess.run(kubeproxy.cleanup_argv(kube_proxy), capture_output=True, check=False)
    # kube-proxy --cleanup leaves kubelet's own chains and CNI portmap's: remove every chain new since up.
    _attempt(
        problems,
        "remove iptables chains",
        iptables.remove_chains,
        iptables.new_chains(before.chains_before),
    )
    _attempt(problems, "delete the bridge", network.delete_bridge)
    network.write_sysctls(before.sysctls_before)
    _attempt(problems, "remove kubelet cgroups", _remove_cgroups)
    _attempt(problems, "remove container log links", _remove_log_links, node.kubelet_paths.pod_logs)
    _attempt(problems, "remove the node's log links", nodelogs.withdraw, node.layout.log)
    kept = hostdirs.remove_created(before.dirs_before)
    if kept:
        problems.append(f"kept directories that are not empty: {', '.join(kept)}")
    if problems:
        report("  real node teardown: " + "; ".join(problems))
    return problems
