"""LocalCluster: the embedded cluster as a target (build if needed, start or reuse, stop if it started it)."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from winsuite.cluster.embedded import launcher
from winsuite.cluster.embedded.state import ClusterState
from winsuite.cluster.embedded.state import Layout
from winsuite.cluster.embedded.state import load
from winsuite.components import kube
from winsuite.components.artifacts import bin_dir_from_env
from winsuite.components.errors import ComponentFailed
from winsuite.components.health import crashed
from winsuite.components.health import http_probe
from winsuite.components.logs import copy_logs
from winsuite.components.processes import alive
from winsuite.components.progress import Reporter
from winsuite.components.progress import stderr_reporter
from winsuite.components.simnodes import ClusterConfig


class LocalCluster:
    """The embedded cluster named `name`; `connect()` builds what is missing and starts or reuses it."""

    # The embedded cluster's network is the machine's own: its pods may reach loopback and their bridge only.
    allows_egress = False

    def __init__(
        self,
        name: str = "winsuite",
        *,
        config: ClusterConfig | None = None,
        real_node: bool | None = None,
        bin_dir: Path | None = None,
        report: Reporter = stderr_reporter,
    ) -> None:
        """`real_node` overrides `config.real_node` (None: on where the machine allows it)."""
        self.name = name
        self.config = config or ClusterConfig()
        if real_node is not None:
            self.config = dataclasses.replace(self.config, real_node=real_node)
        self.bin_dir = bin_dir or bin_dir_from_env()
        self.report = report
        self.layout = Layout(name)
        self.started = False  # whether this object started the cluster (and so `close()` stops it)

    def connect(self) -> None:
        self.report(f"cluster {self.name}: connecting")
        _, started = launcher.up(self.name, self.config, self.report, self.bin_dir)
        self.started = self.started or started

    def state(self) -> ClusterState:
        state = load(self.layout)
        if state is None:
            raise ComponentFailed(
                f"cluster {self.name} is not running; start it with `winsuite cluster up --name {self.name}`"
            )
        return state

    @property
    def has_real_node(self) -> bool:
        return self.state().real_node is not None

    def wait_ready(self, timeout: float) -> None:
        """API server ready, every component alive and every node Ready, within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        state = self.state()
        for proc in state.processes:
            if not alive(proc):
                raise crashed(proc)
        if not http_probe(f"{state.server}/readyz", "ok", self.layout.pki / "ca.crt")():
            raise ComponentFailed(f"cluster {self.name}: {state.server}/readyz is not ok")
        kube.wait_nodes_ready(
            kube.api(self.layout.kubeconfig), state.nodes, max(1.0, deadline - time.monotonic())
        )
        self.report(f"cluster {self.name}: ready ({len(state.nodes)} nodes)")

    def kubeconfig_path(self) -> Path:
        return self.layout.kubeconfig

    def collect_logs(self, dest: Path) -> None:
        copy_logs(self.layout.logs, dest)

    def close(self) -> None:
        """Stop the cluster only if this object started it (a reused cluster keeps running)."""
        if self.started:
            self.down()

    def down(self) -> None:
        launcher.down(self.name, self.report)
        self.started = False

    def describe(self) -> str:
        state = load(self.layout)
        if state is None:
            return f"embedded cluster {self.name} (not running; {self.layout.root})"
        node = (
            "with the real Linux node"
            if state.real_node
            else f"simulated nodes only ({state.real_node_reason})"
        )
        return f"embedded cluster {self.name} at {state.server}, {len(state.nodes)} nodes, {node}"
