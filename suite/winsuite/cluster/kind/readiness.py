"""Whether a kind cluster really serves: its node container runs, its API server answers, every node is Ready,
cluster DNS has an endpoint and the default service account exists."""

from __future__ import annotations

import time

from winsuite.cluster.kind import node
from winsuite.cluster.kind.engine import ContainerEngine
from winsuite.cluster.kind.paths import KindLayout
from winsuite.cluster.kind.state import KindState
from winsuite.components import kube
from winsuite.components.errors import ComponentFailed
from winsuite.components.health import readyz_problem

READYZ_PATIENCE = 10.0  # an API server restarting gets this long before it is called broken


def not_serving(engine: ContainerEngine, layout: KindLayout, state: KindState | None,
                patience: float = READYZ_PATIENCE) -> str | None:
    """What is wrong with the cluster (None when it serves): no record, node container not running, API silent."""
    if state is None or not state.server or not layout.kubeconfig.exists():
        return "no record of it in winsuite's directory (an up that did not finish)"
    condition = node.state(engine, layout.node)
    if condition != "running":
        return f"its node container {layout.node} is {condition or 'gone'}"
    deadline = time.monotonic() + patience
    while (problem := readyz_problem(state.server, layout.ca)) is not None:
        if time.monotonic() >= deadline:
            return f"the API server at {state.server} is not serving: {problem}"
        time.sleep(1.0)
    return None


def wait(engine: ContainerEngine, layout: KindLayout, state: KindState, timeout: float) -> float:
    """Block until the cluster serves (or raise with what was last seen); returns the seconds it took."""
    started = time.monotonic()
    problem = not_serving(engine, layout, state, patience=timeout)
    if problem is not None:
        raise ComponentFailed(f"kind cluster {layout.name}: {problem}")
    core = kube.api(layout.kubeconfig)

    def left() -> float:
        return max(1.0, timeout - (time.monotonic() - started))

    kube.wait_nodes_ready(core, state.nodes, left())
    kube.wait_service_endpoints(core.api_client, "kube-system", "kube-dns", left())
    kube.wait_service_account(core, "default", left())
    return time.monotonic() - started
