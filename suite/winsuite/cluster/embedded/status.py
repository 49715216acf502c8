"""`cluster status`: what is running, what crashed (with its log tail), and the nodes' readiness."""

from __future__ import annotations

import dataclasses

from winsuite.cluster.embedded.state import ClusterState
from winsuite.cluster.embedded.state import Layout
from winsuite.cluster.embedded.state import load
from winsuite.components.health import crashed
from winsuite.components.health import readyz_problem
from winsuite.components.processes import Process
from winsuite.components.processes import alive


@dataclasses.dataclass
class Status:
    layout: Layout
    state: ClusterState | None
    dead: list[Process]
    nodes: dict[str, str]  # node -> Ready / NotReady, read from the API when it answers
    not_serving: str | None = None  # the API server's process is alive but /readyz is not ok: why

    @property
    def running(self) -> bool:
        """A state with no process (an `up` that stopped before starting anything) is not a running cluster."""
        return self.state is not None and bool(self.state.processes) and not self.dead and not self.not_serving


def inspect(name: str) -> Status:
    layout = Layout(name)
    state = load(layout)
    if state is None:
        return Status(layout, None, [], {})
    dead = [proc for proc in state.processes if not alive(proc)]
    apiserver = state.process("kube-apiserver")
    if apiserver is None or apiserver in dead:
        return Status(layout, state, dead, {})
    not_serving = readyz_problem(state.server, layout.pki / "ca.crt")
    from winsuite.components.kube import node_readiness  # the kubernetes client: only when there is a cluster to ask

    return Status(layout, state, dead, {} if not_serving else node_readiness(layout.kubeconfig), not_serving)


def render(status: Status) -> list[str]:
    name, state = status.layout.name, status.state
    if state is None:
        return [f"cluster {name}: not running (start it with `winsuite cluster up --name {name}`)"]
    node = state.real_node.node_name if state.real_node else f"none: {state.real_node_reason}"
    lines = [
        f"cluster {name}: {'running' if status.running else 'degraded'}",
        f"  server      {state.server}",
        f"  kubeconfig  {status.layout.kubeconfig}",
        f"  real node   {node}",
    ]
    for proc in state.processes:
        condition = "exited" if proc in status.dead else "running"
        if proc.name == "kube-apiserver" and status.not_serving:
            condition = "running, not serving"
        lines.append(f"  {proc.name:<24} pid {proc.pid:<8} {condition:<8} {proc.log}")
    if status.not_serving:
        lines.append(f"  kube-apiserver is not serving: {status.not_serving} "
                     f"(`winsuite cluster down --name {name}` stops it; `cluster up` replaces it)")
    lines += [f"  node {node:<19} {readiness}" for node, readiness in sorted(status.nodes.items())]
    lines += [str(crashed(proc)) for proc in status.dead]
    return lines
