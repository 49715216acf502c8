"""The kind target: a cluster managed through the `kind` CLI (Linux nodes only; useful for the Linux side)."""

from __future__ import annotations

import logging
import shutil
import subprocess
import tempfile
from pathlib import Path

from winsuite.cluster import readiness
from winsuite.cluster.kubeconfig import api_client
from winsuite.cluster.kubeconfig import server_version
from winsuite.errors import UsageError
from winsuite.inputs.pins import load_pins

log = logging.getLogger("winsuite.cluster")


class KindTarget:
    allows_egress = True  # kind's nodes share the host's network

    def __init__(self, name: str) -> None:
        self.name = name
        self._kubeconfig: Path | None = None
        self._created = False

    def _kind(self, *args: str, timeout: float = 600) -> str:
        kind = shutil.which("kind")
        if kind is None:
            raise UsageError("the kind target needs the `kind` CLI on PATH (https://kind.sigs.k8s.io); "
                             "or use the embedded cluster (the default) or --kubeconfig")
        done = subprocess.run([kind, *args], capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            raise UsageError(f"kind {' '.join(args)} failed: {done.stderr.strip().splitlines()[-1:]}")
        return done.stdout

    def connect(self) -> None:
        if self.name not in self._kind("get", "clusters").split():
            log.info("creating kind cluster %s", self.name)
            self._kind("create", "cluster", "--name", self.name, "--image", load_pins().kind_node_image,
                       "--wait", "5m")
            self._created = True
            took = readiness.wait_for_controllers(api_client(self.kubeconfig_path()), log.info)
            log.info("kind cluster %s: controllers working after %.1fs", self.name, took)
        log.info("kind cluster %s ready: %s", self.name, server_version(api_client(self.kubeconfig_path())))

    def wait_ready(self, timeout: float) -> None:
        """`kind create cluster --wait` already waited for the control plane."""

    def kubeconfig_path(self) -> Path:
        if self._kubeconfig is None:
            handle = tempfile.NamedTemporaryFile("w", suffix=".kubeconfig", delete=False)  # noqa: SIM115
            with handle:
                handle.write(self._kind("get", "kubeconfig", "--name", self.name))
            self._kubeconfig = Path(handle.name)
        return self._kubeconfig

    def collect_logs(self, dest: Path) -> None:
        self._kind("export", "logs", str(dest), "--name", self.name)

    def close(self) -> None:
        if self._created:
            self._kind("delete", "cluster", "--name", self.name)
        if self._kubeconfig is not None:
            self._kubeconfig.unlink(missing_ok=True)

    def describe(self) -> str:
        return f"kind cluster {self.name}"
