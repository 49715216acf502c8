"""Networking Granular Checks: Pods (KEP-116 substitute tests): intra-pod and node-pod, http and udp.

Names: these tests carry the KEP's names, `[sig-network] [sig-windows] Networking Granular Checks: Pods
should function for …`, which upstream's test/e2e/windows/networking.go gave the Windows substitutes (v1.14
to v1.18), not the names of their current twins in test/e2e/common/network/networking.go. The node-pod twins
are `[LinuxOnly]`, so a test under their names is skipped on every Windows run and could never be the
Windows substitute; the intra-pod twins are conformance tests whose rows belong to upstream conformance
runs, and a second row under the same name would mix two different tests. So the rows continue the KEP's,
and each body is a port of its current twin: the same endpoints (one netexec per node), the same dials, the
same expected hostnames, the same tries (checkPodToPodConnectivity, DialFromNode). What differs on Windows
is done the Windows way: node-to-pod traffic leaves from a HostProcess pod, the only kind of pod that shares
a Windows node's network (seed 002).
"""

from __future__ import annotations

import logging

import pytest
from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.capabilities import requirement_text
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import ClusterSession
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import namespaces
from winsuite.k8s import netexec

log = logging.getLogger("winsuite.cases")

granular = Describe(Area("sig-network"), Area("sig-windows"), "Networking", "Granular Checks: Pods")
NEEDS = [Capability.RUNS_CONTAINERS, Capability.EXEC]


def new_config(api: client.ApiClient, namespace: str, target: Target, cluster: ClusterSession, *,
               host_network: bool) -> netexec.NetworkingTestConfig:
    """NewCoreNetworkingTestConfig, on every node of the target OS that runs containers."""
    if host_network:
        if target.os == "windows" and (found := cluster.facts.missing(Capability.HOSTPROCESS, target.os)):
            pytest.skip(requirement_text(Capability.HOSTPROCESS, target.os, found))
        namespaces.allow_privileged_pods(api, namespace)  # f.NamespacePodSecurityLevel = LevelPrivileged
    nodes = netexec.eligible_nodes(cluster.facts, target.placement)
    return netexec.setup_core(api, namespace, image=target.image("agnhost"), target_os=target.os,
                              nodes=len(nodes), place=target.place, host_network=host_network)


def check_pod_to_pod_connectivity(config: netexec.NetworkingTestConfig, protocol: str, port: int) -> None:
    """checkPodToPodConnectivity: a quick pass over every endpoint, then patient retries of those failed."""
    failed: dict[str, list[netexec.Started]] = {}
    for endpoint in config.endpoint_pods:
        log.info("breadth first check of %s on host %s", endpoint.pod_ip, endpoint.host_ip)
        if netexec.dial_from_test_container(config, protocol, endpoint.pod_ip, port, max_tries=1,
                                            expected=[endpoint.name]) is not None:
            failed.setdefault(endpoint.host_ip, []).append(endpoint)
    errors = []
    for host, endpoints in failed.items():
        log.info("double-checking %d pods on host %s not seen the first time", len(endpoints), host)
        for endpoint in endpoints:
            error = netexec.dial_from_test_container(config, protocol, endpoint.pod_ip, port,
                                                     max_tries=config.max_tries,
                                                     expected=[endpoint.name])
            if error is not None:
                errors.append(error)
    total = len(config.endpoint_pods)
    assert not errors, f"{len(errors)} out of {total} connections failed: " + "; ".join(errors)


def check_node_to_pod_connectivity(config: netexec.NetworkingTestConfig, protocol: str, port: int) -> None:
    """The node-pod Its: DialFromNode to every endpoint, each answering with its own hostname."""
    for endpoint in config.endpoint_pods:
        error = netexec.dial_from_node(config, protocol, endpoint.pod_ip, port,
                                       max_tries=config.max_tries, expected=[endpoint.name])
        assert error is None, f"Error dialing {protocol.upper()} from node to pod: {error}"


PORTS = {"http": netexec.ENDPOINT_HTTP_PORT, "udp": netexec.ENDPOINT_UDP_PORT}
# Its text -> (from the node's network?, protocol)
CHECKS = {f"{kind} communication: {protocol}": (kind == "node-pod", protocol)
          for kind in ("intra-pod", "node-pod") for protocol in PORTS}


@windows_pods(lambda target, check: netexec.core_pods(target.image("agnhost"), target.os, 2, target.place,
                                                     host_network=check[0]),
              upstream="test/e2e/framework/network/utils.go:747-905 (createTestPods, setupCore, createNetProxyPods)")
@granular.it_each("should function for {entry}", argname="check", entries=CHECKS, category="Core.Network",
                  needs=NEEDS, images=["agnhost"])
def test_pods(api: client.ApiClient, namespace: str, target: Target, cluster: ClusterSession,
              check: tuple[bool, str]) -> None:
    from_node, protocol = check
    config = new_config(api, namespace, target, cluster, host_network=from_node)
    if from_node:
        check_node_to_pod_connectivity(config, protocol, PORTS[protocol])
    else:
        check_pod_to_pod_connectivity(config, protocol, PORTS[protocol])
