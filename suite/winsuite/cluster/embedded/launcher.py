"""`cluster up` and `cluster down`: start every component in order, record it, and stop it all by pid."""

from __future__ import annotations

import shutil
import time
import urllib.parse
from pathlib import Path

from winsuite.cluster import readiness
from winsuite.cluster.embedded import controlplane
from winsuite.cluster.embedded import credentials
from winsuite.cluster.embedded import leftovers
from winsuite.cluster.embedded.config import BRIDGE_IP
from winsuite.cluster.embedded.config import DEFAULT_PORTS
from winsuite.cluster.embedded.config import LOOPBACK
from winsuite.cluster.embedded.config import REAL_NODE_NAME
from winsuite.cluster.embedded.config import REAL_NODE_PORTS
from winsuite.cluster.embedded.ports import choose
from winsuite.cluster.embedded.realnode import claim
from winsuite.cluster.embedded.realnode import network
from winsuite.cluster.embedded.realnode import node as realnode
from winsuite.cluster.embedded.realnode import prereqs
from winsuite.cluster.embedded.realnode import teardown
from winsuite.cluster.embedded.state import ClusterState
from winsuite.cluster.embedded.state import Layout
from winsuite.cluster.embedded.state import load
from winsuite.cluster.embedded.state import save
from winsuite.components import kube
from winsuite.components import simnodes
from winsuite.components.artifacts import Group
from winsuite.components.artifacts import catalog
from winsuite.components.artifacts import locate
from winsuite.components.artifacts import select
from winsuite.components.build import Builder
from winsuite.components.health import crashed
from winsuite.components.health import http_probe
from winsuite.components.health import readyz_problem
from winsuite.components.health import wait_until
from winsuite.components.locks import file_lock
from winsuite.components.processes import alive
from winsuite.components.processes import spawn
from winsuite.components.processes import stop
from winsuite.components.progress import Reporter
from winsuite.components.progress import elapsed
from winsuite.components.simnodes import ClusterConfig
from winsuite.inputs.pins import load_pins

NODES_READY_TIMEOUT = 120.0


def real_node_decision(config: ClusterConfig, bin_dir: Path | None) -> str:
    """'' when this cluster gets the real node, else the one-line reason it does not."""
    if config.real_node is False:
        return "not requested (--no-real-node)"
    pause = next(artifact for artifact in catalog(load_pins()) if artifact.name == "pause")
    return prereqs.unavailable_reason(need_gcc=locate(pause, bin_dir) is None)


def up(
    name: str, config: ClusterConfig, report: Reporter, bin_dir: Path | None = None
) -> tuple[ClusterState, bool]:
    """Start the cluster or reuse the running one; returns its state and whether this call started it."""
    simnodes.check_builds(config.windows_builds)  # a user mistake: say so before anything starts
    layout = Layout(name)
    with file_lock(layout.lock):
        existing = load(layout)
        if existing is not None:
            dead = [proc for proc in existing.processes if not alive(proc)]
            not_serving = None if dead else _api_not_serving(layout, existing)
            if not dead and not_serving is None:
                node = (
                    "with the real node"
                    if existing.real_node
                    else f"no real node: {existing.real_node_reason}"
                )
                report(f"cluster {name} is already running ({existing.server}, {node}); reusing it")
                return existing, False
            if not_serving is not None:
                report(f"cluster {name}: {not_serving}; replacing it")
            elif len(dead) == len(existing.processes):
                # Every process gone at once is a restarted machine or a killed session, not a crash:
                # one line instead of every component's log tail.
                report(f"cluster {name}: none of its processes is running any more; replacing it")
            else:
                for proc in dead:
                    report(str(crashed(proc)))
                report(f"cluster {name} has stopped components; replacing it")
            _down_locked(layout, existing, report)
        elif layout.root.exists():
            shutil.rmtree(layout.root)  # an up interrupted before it recorded anything
        return _start(layout, config, report, bin_dir), True


READY_RETRY_SECONDS = 10.0  # an API server restarting (or busy) gets this long before it is called broken


def _api_not_serving(layout: Layout, state: ClusterState, patience: float = READY_RETRY_SECONDS) -> str | None:
    """What is wrong when the API server's process is alive but does not serve (None when it serves)."""
    apiserver = state.process("kube-apiserver")
    deadline = time.monotonic() + patience
    while True:
        problem = readyz_problem(state.server, layout.pki / "ca.crt")
        if problem is None:
            return None
        if time.monotonic() >= deadline:
            pid = f" (pid {apiserver.pid})" if apiserver is not None else ""
            return f"kube-apiserver{pid} is running but not serving: {problem}"
        time.sleep(1.0)


def _failed_up_logs(layout: Layout) -> Path:
    """Where the logs of an `up` that failed are kept (its cluster directory is removed)."""
    return layout.root.parent / f"{layout.name}.failed-up-logs"


def _ports(real: bool, report: Reporter) -> dict[str, int]:
    wanted = dict(DEFAULT_PORTS)
    if not real:
        return choose(LOOPBACK, wanted, report)
    # The API server binds the bridge address, which exists only for this cluster: its port is always free.
    apiserver = wanted.pop("kube-apiserver")
    return choose(LOOPBACK, wanted | REAL_NODE_PORTS, report) | {"kube-apiserver": apiserver}


def _start(layout: Layout, config: ClusterConfig, report: Reporter, bin_dir: Path | None) -> ClusterState:
    started_at = time.monotonic()
    pins = load_pins()
    reason = real_node_decision(config, bin_dir)
    groups = [Group.CONTROL_PLANE] + ([] if reason else [Group.REAL_NODE])
    bins = Builder(pins, report, bin_dir).ensure(select(pins, groups))
    sim_nodes = simnodes.manifests(config, pins.kubernetes)
    layout.root.mkdir(parents=True)
    try:
        names = [node["metadata"]["name"] for node in sim_nodes]
        state = _new_state(layout, config, reason, bins=bins, sim_nodes=names, report=report)
    except BaseException:
        claim.release(layout)
        shutil.rmtree(layout.root)
        raise
    report(f"starting cluster {layout.name} in {layout.root}")
    save(layout, state)  # from here on, `down` knows what to undo
    try:
        _run_components(layout, state, sim_nodes, report)
    except BaseException:
        save(layout, state)
        kept = _failed_up_logs(layout)
        shutil.rmtree(kept, ignore_errors=True)
        if layout.logs.exists():
            shutil.copytree(layout.logs, kept)
        report(f"cluster {layout.name} failed to start; stopping what was started (logs kept in {kept})")
        _down_locked(layout, state, report)
        raise
    save(layout, state)
    took = elapsed(time.monotonic() - started_at)
    report(f"cluster {layout.name} ready in {took}: {len(state.nodes)} nodes, {state.server}")
    return state


def _new_state(
    layout: Layout,
    config: ClusterConfig,
    reason: str,
    *,
    bins: dict[str, Path],
    sim_nodes: list[str],
    report: Reporter,
) -> ClusterState:
    """Claim the real node if it is wanted, choose ports, and record the host as it is before any change."""
    reason = reason or claim.acquire(layout)  # after the build: claiming is quick, building is not
    real = not reason
    if reason and config.real_node is not False:
        report(f"no real node: {reason}; starting a simulated-only cluster")
    ports = _ports(real, report)
    return ClusterState(
        name=layout.name,
        server=f"https://{BRIDGE_IP if real else LOOPBACK}:{ports['kube-apiserver']}",
        ports=ports,
        bins={key: str(path) for key, path in bins.items()},
        nodes=sim_nodes + ([REAL_NODE_NAME] if real else []),
        real_node=realnode.snapshot_host() if real else None,
        real_node_reason=reason,
    )


def _run_components(
    layout: Layout, state: ClusterState, sim_nodes: list[dict[str, object]], report: Reporter
) -> None:
    bins = {key: Path(path) for key, path in state.bins.items()}
    real = state.real_node is not None
    credentials.write(layout, state.server, real)
    if real:
        network.setup()
    host = urllib.parse.urlsplit(state.server).hostname or LOOPBACK
    cp = controlplane.ControlPlane(layout, bins, state.ports, host, real)
    controlplane.start(cp, report, state.processes)
    save(layout, state)
    kwok_argv = simnodes.kwok_argv(
        bins["kwok"],
        bins["kwok-stages"],
        layout.kubeconfig,
        (layout.pki / "kwok-serving.crt", layout.pki / "kwok-serving.key"),
        state.ports["kwok"],
    )
    kwok = spawn("kwok", kwok_argv, layout.log("kwok"))
    state.processes.append(kwok)
    save(layout, state)
    kwok_health = http_probe(f"https://{LOOPBACK}:{state.ports['kwok']}/healthz", "ok", layout.pki / "ca.crt")
    wait_until(kwok, kwok_health, what="healthy", timeout=controlplane.READY_TIMEOUT)
    core = kube.api(layout.kubeconfig)
    kube.create_nodes(core, sim_nodes)
    if real:
        realnode.start(realnode.RealNode(layout, bins, state.ports), report, state.processes)
        save(layout, state)
    took = kube.wait_nodes_ready(core, state.nodes, NODES_READY_TIMEOUT)
    kube.wait_service_account(core, "default", NODES_READY_TIMEOUT)
    report(f"  {len(state.nodes)} nodes Ready after {took:.1f}s")
    if real:
        node = realnode.RealNode(layout, bins, state.ports)
        realnode.confirm_container_stats(node, report)
        realnode.confirm_add_ons(node, state.processes, report)
    # After the add-ons: while an aggregated API (metrics.k8s.io) is not Available, the namespace controller
    # cannot finish any deletion ("Discovery failed for some groups").
    took = readiness.wait_for_controllers(core.api_client, report)
    report(f"  controllers working after {took:.1f}s")


def down(name: str, report: Reporter) -> bool:
    """Stop every component of the cluster by pid and remove its state; False when there was none."""
    layout = Layout(name)
    if not layout.root.exists() and not _failed_up_logs(layout).exists():
        return False  # nothing to stop (and no lock file left behind for a name never used)
    with file_lock(layout.lock):
        shutil.rmtree(_failed_up_logs(layout), ignore_errors=True)
        state = load(layout)
        if state is None and not layout.root.exists():
            return False
        _down_locked(layout, state, report)
        return True


def _down_locked(layout: Layout, state: ClusterState | None, report: Reporter) -> None:
    problems: list[str] = []
    if state is not None:
        node = realnode.RealNode(layout, {k: Path(v) for k, v in state.bins.items()}, state.ports)
        if state.real_node is not None:
            # Pods are deleted through the API only when it serves now: a dead, stopped or wedged API server
            # gets no requests that would wait on it; the kubelet's containers are then removed directly.
            apiserver = state.process("kube-apiserver")
            api_up = apiserver is not None and alive(apiserver) and _api_not_serving(layout, state, 0) is None
            problems += teardown.stop_workloads(node, state.processes, api_up, report)
        for proc in reversed(state.processes):
            try:
                if stop(proc):
                    report(f"  {proc.name} (pid {proc.pid}) did not stop on SIGTERM: killed")
            except RuntimeError as err:
                problems.append(str(err))
        if state.real_node is not None:
            problems += teardown.clean_host(node, state.real_node, report)
            claim.release(layout)
    shutil.rmtree(layout.root, ignore_errors=True)
    if state is not None:
        problems += leftovers.after_down(layout, state)
    report(f"cluster {layout.name} stopped" + (f" with problems: {'; '.join(problems)}" if problems else ""))
