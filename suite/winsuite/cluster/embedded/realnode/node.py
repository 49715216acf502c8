"""Bring up the real node: host network, containerd with the local images, kubelet, kube-proxy, CoreDNS."""

from __future__ import annotations

import base64
import dataclasses
import json
import time
from collections.abc import Mapping
from pathlib import Path

import yaml

from winsuite.cluster import load_balancer
from winsuite.cluster.embedded.config import REAL_NODE_NAME
from winsuite.cluster.embedded.realnode import containerd
from winsuite.cluster.embedded.realnode import coredns
from winsuite.cluster.embedded.realnode import hostdirs
from winsuite.cluster.embedded.realnode import iptables
from winsuite.cluster.embedded.realnode import kubelet
from winsuite.cluster.embedded.realnode import kubeproxy
from winsuite.cluster.embedded.realnode import metrics_server
from winsuite.cluster.embedded.realnode import network
from winsuite.cluster.embedded.realnode import nodelogs
from winsuite.cluster.embedded.realnode import servicelb
from winsuite.cluster.embedded.realnode import stats_probe
from winsuite.cluster.embedded.state import Layout
from winsuite.cluster.embedded.state import RealNodeState
from winsuite.components import images
from winsuite.components import kube
from winsuite.components.health import crashed
from winsuite.components.health import http_probe
from winsuite.components.health import wait_until
from winsuite.components.processes import Process
from winsuite.components.processes import spawn
from winsuite.components.progress import Reporter

READY_TIMEOUT = 60.0
METRICS_READY_TIMEOUT = 120.0  # metrics-server is ready after its first scrape of the kubelet (15 s resolution)


@dataclasses.dataclass(frozen=True)
class RealNode:
    layout: Layout
    bins: Mapping[str, Path]
    ports: Mapping[str, int]
    name: str = REAL_NODE_NAME

    @property
    def containerd(self) -> containerd.Containerd:
        return containerd.Containerd(self.layout.node / "containerd")

    @property
    def kubelet_paths(self) -> kubelet.KubeletPaths:
        return kubelet.KubeletPaths(self.layout.node / "kubelet", self.layout.pki, self.containerd.socket)

    def kubeconfig(self, client: str) -> Path:
        return self.layout.config / f"{client}.kubeconfig"


def snapshot_host() -> RealNodeState:
    """What the host looks like before the node changes it; `down` restores or removes the difference."""
    return RealNodeState(
        node_name=REAL_NODE_NAME,
        chains_before=iptables.owned_chains(),
        netns_before=network.netns_names(),
        sysctls_before=network.read_sysctls(),
        dirs_before=hostdirs.existing(),
    )


def _spawn_configured(node: RealNode, name: str, config: Path, text: str, argv: list[str]) -> Process:
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text)
    return spawn(name, argv, node.layout.log(name))


def start(node: RealNode, report: Reporter, started: list[Process]) -> None:
    """Start the node's components in dependency order; appends each to `started` as soon as it runs."""
    runtime = node.containerd
    runtime.cni_conf_dir.mkdir(parents=True, exist_ok=True)
    conflist = network.conflist(node.layout.node / "cni" / "ipam")
    (runtime.cni_conf_dir / "10-winsuite.conflist").write_text(json.dumps(conflist, indent=2))

    archives = images.archives(node.bins, report)
    proc = containerd.start(runtime, images.sandbox_image_name(), node.layout.log("containerd"))
    started.append(proc)
    containerd.import_images(runtime, archives)
    report(f"  containerd ready, {len(archives)} image archives imported (pid {proc.pid})")

    paths = node.kubelet_paths
    kubelet.write_config(paths, node.ports["kubelet-healthz"])
    started.append(
        spawn(
            "kubelet",
            kubelet.argv(node.bins["kubelet"], paths, node.kubeconfig("kubelet"), node.name),
            node.layout.log("kubelet"),
        )
    )

    for problem in nodelogs.offer(node.layout.log):
        report(f"  node log query: {problem}")

    proxy_config = node.layout.config / "kube-proxy.yaml"
    proxy_text = yaml.safe_dump(kubeproxy.render_config(node.kubeconfig("kube-proxy"), node.name, node.ports))
    started.append(
        _spawn_configured(
            node,
            "kube-proxy",
            proxy_config,
            proxy_text,
            kubeproxy.argv(node.bins["kube-proxy"], proxy_config),
        )
    )

    corefile = node.layout.config / "Corefile"
    dns = _spawn_configured(
        node,
        "coredns",
        corefile,
        coredns.corefile(node.layout.kubeconfig, node.ports),
        coredns.argv(node.bins["coredns"], corefile),
    )
    started.append(dns)
    core = kube.api(node.layout.kubeconfig)
    kube.create_namespaced(core, [coredns.service(), coredns.endpoints()])
    ready_url = f"http://127.0.0.1:{node.ports['coredns-ready']}/ready"
    took = wait_until(dns, http_probe(ready_url, "OK"), what=f"ready at {ready_url}", timeout=READY_TIMEOUT)
    kube.wait_service_endpoints(core.api_client, coredns.NAMESPACE, coredns.SERVICE, READY_TIMEOUT)
    report(f"  kubelet, kube-proxy and CoreDNS started; CoreDNS ready after {took:.1f}s")

    started.append(spawn(servicelb.NAME, servicelb.argv(node.bins[servicelb.NAME], node.layout.kubeconfig,
                                                        node.layout.name), node.layout.log(servicelb.NAME)))
    started.append(spawn(metrics_server.NAME, metrics_server.argv(node.bins[metrics_server.NAME],
                                                                  node.layout.kubeconfig, node.layout.pki),
                         node.layout.log(metrics_server.NAME)))
    kube.create_namespaced(core, [metrics_server.service(), metrics_server.endpoints()])
    ca_bundle = base64.b64encode((node.layout.pki / "ca.crt").read_bytes()).decode()
    kube.create_api_service(core.api_client, metrics_server.api_service(ca_bundle))


def confirm_container_stats(node: RealNode, report: Reporter) -> None:
    """Ready means the node's containers are measured: the kubelet's summary has a probe container's figures."""
    core = kube.api(node.layout.kubeconfig)
    kube.wait_service_account(core, stats_probe.NAMESPACE, READY_TIMEOUT)
    took = stats_probe.wait_for_container_stats(
        core, node.name, images.image_name("busybox"), node.layout.log("kubelet")
    )
    report(f"  container CPU and memory in the kubelet's stats summary after {took:.1f}s")


def confirm_add_ons(node: RealNode, started: list[Process], report: Reporter) -> None:
    """Ready means the add-ons work: the metrics API answers through the aggregator, and a LoadBalancer Service
    gets an address."""
    core = kube.api(node.layout.kubeconfig)
    server = next(proc for proc in started if proc.name == metrics_server.NAME)
    begun = time.monotonic()
    wait_until(server, http_probe(metrics_server.ready_url(), "ok", node.layout.pki / "ca.crt"),
               what=f"ready at {metrics_server.ready_url()}", timeout=METRICS_READY_TIMEOUT)
    kube.wait_api_service_available(core.api_client, metrics_server.API_SERVICE, METRICS_READY_TIMEOUT)
    report(f"  metrics API ({metrics_server.API_SERVICE}) Available after {time.monotonic() - begun:.1f}s")
    begun = time.monotonic()
    evidence, missing = load_balancer.probe(core, load_balancer.PROBE_TIMEOUT)
    if not evidence:
        balancer = next(proc for proc in started if proc.name == servicelb.NAME)
        raise crashed(balancer, f"gives LoadBalancer Services no address: {missing}")
    report(f"  LoadBalancer Services served: {evidence} after {time.monotonic() - begun:.1f}s")
