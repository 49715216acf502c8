"""etcd, kube-apiserver, kube-controller-manager and kube-scheduler: their flags, started in order."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from winsuite.cluster.embedded.config import CLUSTER_CIDR
from winsuite.cluster.embedded.config import CLUSTER_DOMAIN
from winsuite.cluster.embedded.config import LOOPBACK
from winsuite.cluster.embedded.config import SERVICE_CIDR
from winsuite.cluster.embedded.credentials import FRONT_PROXY_CLIENT
from winsuite.cluster.embedded.pki import SERVICE_ACCOUNT_KEY
from winsuite.cluster.embedded.state import Layout
from winsuite.components.health import http_probe
from winsuite.components.health import wait_until
from winsuite.components.processes import Process
from winsuite.components.processes import spawn
from winsuite.components.progress import Reporter

READY_TIMEOUT = 60.0


@dataclasses.dataclass(frozen=True)
class ControlPlane:
    layout: Layout
    bins: Mapping[str, Path]
    ports: Mapping[str, int]
    host: str  # where the API server binds and what it advertises
    real_node: bool

    @property
    def server(self) -> str:
        return f"https://{self.host}:{self.ports['kube-apiserver']}"

    def kubeconfig(self, client: str) -> Path:
        return self.layout.config / f"{client}.kubeconfig"

    def pki(self, name: str) -> str:
        return str(self.layout.pki / name)


def etcd_argv(cp: ControlPlane) -> list[str]:
    client = f"http://{LOOPBACK}:{cp.ports['etcd-client']}"
    peer = f"http://{LOOPBACK}:{cp.ports['etcd-peer']}"
    return [
        str(cp.bins["etcd"]),
        f"--name={cp.layout.name}",
        f"--data-dir={cp.layout.root / 'etcd'}",
        f"--listen-client-urls={client}",
        f"--advertise-client-urls={client}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster={cp.layout.name}={peer}",
        "--unsafe-no-fsync",  # throwaway test data: durability costs seconds per write burst here
        "--log-level=warn",
    ]


def apiserver_argv(cp: ControlPlane) -> list[str]:
    argv = [
        str(cp.bins["kube-apiserver"]),
        f"--etcd-servers=http://{LOOPBACK}:{cp.ports['etcd-client']}",
        f"--bind-address={cp.host}",
        f"--advertise-address={cp.host}",
        f"--secure-port={cp.ports['kube-apiserver']}",
        f"--cert-dir={cp.layout.pki / 'generated'}",
        f"--tls-cert-file={cp.pki('apiserver.crt')}",
        f"--tls-private-key-file={cp.pki('apiserver.key')}",
        f"--client-ca-file={cp.pki('ca.crt')}",
        f"--service-account-issuer=https://kubernetes.default.svc.{CLUSTER_DOMAIN}",
        f"--service-account-key-file={cp.pki(SERVICE_ACCOUNT_KEY)}",
        f"--service-account-signing-key-file={cp.pki(SERVICE_ACCOUNT_KEY)}",
        "--authorization-mode=Node,RBAC",
        "--enable-admission-plugins=NodeRestriction",  # added to the default admission plugins
        "--allow-privileged=true",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        f"--kubelet-client-certificate={cp.pki('apiserver-kubelet-client.crt')}",
        f"--kubelet-client-key={cp.pki('apiserver-kubelet-client.key')}",
        "--kubelet-preferred-address-types=InternalIP,Hostname",
        # The aggregation layer (metrics.k8s.io from metrics-server): who the API server is towards an aggregated
        # API, and that it calls the APIService's endpoint directly rather than through its Service's VIP.
        f"--requestheader-client-ca-file={cp.pki('ca.crt')}",
        f"--requestheader-allowed-names={FRONT_PROXY_CLIENT}",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        f"--proxy-client-cert-file={cp.pki(FRONT_PROXY_CLIENT + '.crt')}",
        f"--proxy-client-key-file={cp.pki(FRONT_PROXY_CLIENT + '.key')}",
        "--enable-aggregator-routing=true",
    ]
    if not cp.real_node:
        # A loopback advertise address is not a valid endpoint for the `kubernetes` Service; with no pod
        # that could use it anyway, do not maintain the endpoint at all.
        argv.append("--endpoint-reconciler-type=none")
    return argv


def _component_argv(cp: ControlPlane, name: str, port: str) -> list[str]:
    kubeconfig = cp.kubeconfig(name)
    return [
        str(cp.bins[name]),
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        f"--bind-address={LOOPBACK}",
        f"--secure-port={cp.ports[port]}",
        f"--tls-cert-file={cp.pki(name + '-serving.crt')}",
        f"--tls-private-key-file={cp.pki(name + '-serving.key')}",
        "--leader-elect=false",
    ]


def controller_manager_argv(cp: ControlPlane) -> list[str]:
    return [
        *_component_argv(cp, "kube-controller-manager", "kube-controller-manager"),
        f"--service-account-private-key-file={cp.pki(SERVICE_ACCOUNT_KEY)}",
        f"--root-ca-file={cp.pki('ca.crt')}",
        "--use-service-account-credentials=true",
        "--controllers=*",
        f"--cluster-signing-cert-file={cp.pki('ca.crt')}",
        f"--cluster-signing-key-file={cp.pki('ca.key')}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        f"--cluster-cidr={CLUSTER_CIDR}",
        "--allocate-node-cidrs=false",  # the real node's CNI config names its pod range itself
    ]


def scheduler_argv(cp: ControlPlane) -> list[str]:
    return _component_argv(cp, "kube-scheduler", "kube-scheduler")


def start(cp: ControlPlane, report: Reporter, started: list[Process]) -> None:
    """Start etcd, then the API server, then both controllers together; each phase waits for health.

    Appends to `started` as it goes, so a failure part-way leaves a record of what to stop.
    """
    ca = cp.layout.pki / "ca.crt"
    loopback = f"https://{LOOPBACK}"
    phases = (
        (("etcd", etcd_argv(cp), f"http://{LOOPBACK}:{cp.ports['etcd-client']}/health", '"health":"true"'),),
        (("kube-apiserver", apiserver_argv(cp), f"{cp.server}/readyz", "ok"),),
        (
            (
                "kube-controller-manager",
                controller_manager_argv(cp),
                f"{loopback}:{cp.ports['kube-controller-manager']}/healthz",
                "ok",
            ),
            ("kube-scheduler", scheduler_argv(cp), f"{loopback}:{cp.ports['kube-scheduler']}/healthz", "ok"),
        ),
    )
    for phase in phases:
        procs = [spawn(name, argv, cp.layout.log(name)) for name, argv, _, _ in phase]
        started.extend(procs)
        for proc, (name, _, url, expect) in zip(procs, phase, strict=True):
            took = wait_until(
                proc, http_probe(url, expect, ca), what=f"healthy at {url}", timeout=READY_TIMEOUT
            )
            report(f"  {name} ready after {took:.1f}s (pid {proc.pid})")
