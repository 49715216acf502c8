"""A cluster winsuite did not make: kwok's own tool, kwokctl, starts a control plane of its own (its certificates,
ports and state) from winsuite's cached binaries, and Nodes are added with `kubectl apply` as kwok's users add them.
Tests reach it only through the kubeconfig kwokctl writes, as a SIG member brings a cluster."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kubernetes import client

from winsuite.authoring.targeting import SIMULATED_NODE_ANNOTATION
from winsuite.authoring.targeting import SIMULATED_NODE_TAINT_KEY
from winsuite.components import kube
from winsuite.components.artifacts import BIN_DIR_ENV
from winsuite.components.artifacts import Group
from winsuite.components.artifacts import locate
from winsuite.components.artifacts import select
from winsuite.components.build import Builder
from winsuite.components.progress import Reporter
from winsuite.inputs.pins import Pins
from winsuite.inputs.pins import load_pins
from winsuite.k8s.waits import poll

log = logging.getLogger(__name__)

WINDOWS_BUILD = "10.0.20348"  # Windows Server 2022
# kwokctl's flag for each binary it runs, and the catalog's name of that binary.
BINARY_FLAGS = {
    "--etcd-binary": "etcd",
    "--kube-apiserver-binary": "kube-apiserver",
    "--kube-controller-manager-binary": "kube-controller-manager",
    "--kube-scheduler-binary": "kube-scheduler",
    "--kwok-controller-binary": "kwok",
}
GROUPS = (Group.CONTROL_PLANE, Group.TEST_TOOLS)  # the binaries above, kubectl and kwokctl
KWOKCTL_TIMEOUT = 300.0  # seconds for `kwokctl create cluster` (about 5 s when the machine is idle)
READY_TIMEOUT = 120.0


@dataclasses.dataclass(frozen=True)
class NodeSpec:
    """A Node as kwok's users write it: the annotation kwok's docs give it, kwok's taint or not."""

    name: str
    os: str  # the kubernetes.io/os label and status.nodeInfo.operatingSystem
    annotated: bool = True  # kwok.x-k8s.io/node: fake (kwokctl's kwok manages every node anyway)
    tainted: bool = True  # kwok.x-k8s.io/node=fake:NoSchedule, as in kwok's docs; `kwokctl scale node` leaves it out

    def manifest(self) -> dict[str, Any]:
        labels = {"kubernetes.io/os": self.os, "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": self.name,
                  "beta.kubernetes.io/os": self.os, "beta.kubernetes.io/arch": "amd64", "type": "kwok"}
        info = {"architecture": "amd64", "bootID": "", "containerRuntimeVersion": "", "kernelVersion": "",
                "kubeProxyVersion": "fake", "kubeletVersion": "fake", "machineID": "", "operatingSystem": self.os,
                "osImage": "", "systemUUID": ""}
        if self.os == "windows":
            labels["node.kubernetes.io/windows-build"] = WINDOWS_BUILD
            info.update(osImage="Windows Server 2022 Datacenter", kernelVersion=f"{WINDOWS_BUILD}.2700")
        resources = {"cpu": "32", "memory": "256Gi", "pods": "110"}
        taints = [{"key": SIMULATED_NODE_TAINT_KEY, "value": "fake", "effect": "NoSchedule"}] if self.tainted else []
        return {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": self.name, "labels": labels,
                         "annotations": {SIMULATED_NODE_ANNOTATION: "fake"} if self.annotated else {}},
            "spec": {"taints": taints},
            "status": {"allocatable": resources, "capacity": resources, "nodeInfo": info, "phase": "Running"},
        }


NODES = (
    NodeSpec("kwok-windows-tainted", "windows"),
    NodeSpec("kwok-windows-untainted", "windows", tainted=False),
    NodeSpec("kwok-linux-unannotated", "linux", annotated=False, tainted=False),
)


def missing_prerequisite(bin_dir: Path | None) -> str | None:
    """The exact thing to provide when kwokctl or the binaries it runs can be neither found nor built."""
    pins = load_pins()
    missing = [a.name for a in select(pins, GROUPS) if locate(a, bin_dir) is None]
    if missing and shutil.which("go") is None:
        return (f"needs Go >= {pins.go} on PATH (to build {', '.join(missing)} from the Go module proxy), or "
                f"{BIN_DIR_ENV} with them")
    return None


def binaries(pins: Pins, report: Reporter, bin_dir: Path | None) -> dict[str, Path]:
    """kwokctl, kubectl and the control plane's binaries: found (bin directory, cache) or built into the cache, as
    `winsuite cluster build` builds them (once per pinned version, under the build lock)."""
    return Builder(pins, report, bin_dir).ensure(select(pins, GROUPS))


@dataclasses.dataclass
class ForeignCluster:
    """One kwokctl cluster of the binary runtime, its state under `workdir` (KWOK_WORKDIR)."""

    name: str
    workdir: Path
    bins: Mapping[str, Path]
    kubernetes_version: str
    nodes: tuple[NodeSpec, ...] = NODES
    created_in: float = 0.0  # seconds `kwokctl create cluster` took

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig.yaml"

    @property
    def api(self) -> client.ApiClient:
        api: client.ApiClient = kube.api(self.kubeconfig).api_client
        return api

    @property
    def node_names(self) -> list[str]:
        return [node.name for node in self.nodes]

    def create(self) -> None:
        """Create the cluster (kwokctl picks its ports), wait until it serves, and add the nodes."""
        flags = [f"{flag}={self.bins[name]}" for flag, name in BINARY_FLAGS.items()]
        log.info("creating kwokctl cluster %s in %s", self.name, self.workdir)
        started = time.monotonic()
        self._kwokctl("create", "cluster", "--name", self.name, "--runtime", "binary", "--secure-port=true",
                      "--kubeconfig", str(self.kubeconfig), "--timeout", f"{int(KWOKCTL_TIMEOUT)}s", *flags)
        self.created_in = time.monotonic() - started
        log.info("created kwokctl cluster %s in %.1fs", self.name, self.created_in)
        try:
            self.wait_serving(READY_TIMEOUT)
            self.apply_nodes()
        except Exception as err:  # whatever it was, the components' logs say why
            raise RuntimeError(f"failed to start kwokctl cluster {self.name}: {err}\n{self.logs()}") from err
        log.info("kwokctl cluster %s ready with nodes %s", self.name, ", ".join(self.node_names))

    def wait_serving(self, timeout: float) -> None:
        """The API server answers and the controller manager works (it made the default service account)."""
        core = kube.api(self.kubeconfig)
        poll(f"the API server of kwokctl cluster {self.name} to answer", client.VersionApi(core.api_client).get_code,
             timeout=timeout)
        kube.wait_service_account(core, "default", timeout=timeout)

    def apply_nodes(self) -> None:
        """`kubectl apply -f` of the Node objects, then watch until kwok has made every one Ready."""
        document = {"apiVersion": "v1", "kind": "List", "items": [node.manifest() for node in self.nodes]}
        manifest = self.workdir / "nodes.json"
        manifest.write_text(json.dumps(document, indent=2))
        self._run([str(self.bins["kubectl"]), "--kubeconfig", str(self.kubeconfig), "apply", "-f", str(manifest)],
                  timeout=60)
        kube.wait_nodes_ready(kube.api(self.kubeconfig), self.node_names, READY_TIMEOUT)

    def delete(self) -> None:
        """Stop every process of the cluster and remove its state (nothing to do for a cluster never created)."""
        if (self.workdir / "clusters" / self.name).exists():
            self._kwokctl("delete", "cluster", "--name", self.name)

    def logs(self) -> str:
        """The components' logs kwokctl keeps, for a failure's message."""
        found = sorted((self.workdir / "clusters" / self.name / "logs").glob("*.log"))
        return "\n".join(f"--- {path.name}\n{path.read_text(errors='replace')[-2000:]}" for path in found)

    def _kwokctl(self, *args: str) -> None:
        env = dict(os.environ, KWOK_WORKDIR=str(self.workdir), KWOK_KUBE_VERSION=self.kubernetes_version)
        self._run([str(self.bins["kwokctl"]), *args], timeout=KWOKCTL_TIMEOUT + 30, env=env)

    def _run(self, argv: list[str], *, timeout: float, env: dict[str, str] | None = None) -> None:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"failed to run {' '.join(argv[:3])} for kwokctl cluster {self.name}: exit "
                               f"{done.returncode}\n{done.stdout[-2000:]}{done.stderr[-4000:]}")
