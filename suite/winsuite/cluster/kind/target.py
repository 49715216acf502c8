"""KindTarget: a kind cluster as a target (create or reuse it, wait until it serves, delete it if it made it)."""

from __future__ import annotations

from pathlib import Path

from winsuite.cluster.kind import engine as engines
from winsuite.cluster.kind import lifecycle
from winsuite.cluster.kind import readiness
from winsuite.cluster.kind.paths import KindLayout
from winsuite.cluster.kind.state import KindState
from winsuite.cluster.kind.state import load
from winsuite.components.artifacts import bin_dir_from_env
from winsuite.components.errors import ComponentFailed
from winsuite.components.progress import Reporter
from winsuite.components.progress import stderr_reporter
from winsuite.components.simnodes import ClusterConfig


class KindTarget:
    """The kind cluster `name`; `connect()` creates it (building the node image when none is named) or reuses it."""

    # The nodes' network is winsuite's own bridge, with no NAT: pods reach the node and the host, not the Internet.
    allows_egress = False

    def __init__(self, name: str = "winsuite", *, image: str | None = None, config: ClusterConfig | None = None,
                 report: Reporter = stderr_reporter) -> None:
        self.name = name
        self.image = image
        self.config = config or ClusterConfig(real_node=False)
        self.report = report
        self.layout = KindLayout(name)
        self.bin_dir = bin_dir_from_env()
        self.started = False  # whether this object created the cluster (and so `close()` deletes it)

    def connect(self) -> None:
        self.report(f"kind cluster {self.name}: connecting")
        _, created = lifecycle.up(self.name, self.image, self.config, self.report, self.bin_dir)
        self.started = self.started or created

    def state(self) -> KindState:
        state = load(self.layout)
        if state is None:
            raise ComponentFailed(f"kind cluster {self.name} is not running; start it with "
                                  f"`winsuite cluster up --type kind --name {self.name}`")
        return state

    def wait_ready(self, timeout: float) -> None:
        """The node container runs, the API server serves, every node is Ready and cluster DNS has an endpoint."""
        took = readiness.wait(engines.choose(), self.layout, self.state(), timeout)
        self.report(f"kind cluster {self.name}: ready ({len(self.state().nodes)} nodes, {took:.1f}s)")

    def kubeconfig_path(self) -> Path:
        return self.layout.kubeconfig

    def collect_logs(self, dest: Path) -> None:
        """`kind export logs`: the node's journal, containerd, kubelet and every pod's logs."""
        lifecycle.export_logs(self.name, dest)

    def close(self) -> None:
        """Delete the cluster only if this object created it (a reused cluster keeps running)."""
        if self.started:
            self.down()

    def down(self) -> None:
        lifecycle.down(self.name, self.report)
        self.started = False

    def describe(self) -> str:
        state = load(self.layout)
        if state is None:
            return f"kind cluster {self.name} (not running)"
        return f"kind cluster {self.name} at {state.server} ({state.engine}, {state.image}), {len(state.nodes)} nodes"
