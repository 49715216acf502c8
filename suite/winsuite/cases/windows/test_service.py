"""NodePort Services backed by Windows pods (service.go): reached from Windows pods, on Linux and Windows node IPs."""

from __future__ import annotations

import random
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import Target
from winsuite.authoring.targeting import OS_LABEL
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import connectivity
from winsuite.k8s import manifests
from winsuite.k8s import nodes
from winsuite.k8s import objects
from winsuite.k8s import pods
from winsuite.k8s import probes
from winsuite.k8s import retry
from winsuite.k8s import workloads

service_tests = Describe(Area("sig-windows"), "Services")
SERVICE = "nodeport-test"


def create_node_port_service(api: client.ApiClient, namespace: str, labels: dict[str, str]) -> client.V1Service:
    """jig.CreateTCPService with type NodePort: port 80 to the pods carrying the jig's labels."""
    return connectivity.create_tcp_service(api, namespace, SERVICE, labels, [{"protocol": "TCP", "port": 80}],
                                           type="NodePort")


def backends_deployment(target: Target, labels: dict[str, str]) -> dict[str, Any]:
    """jig.Run's Deployment: one agnhost netexec replica, Ready on /hostName."""
    netexec = manifests.container("netexec", target.image("agnhost"),
                                  args=["netexec", "--http-port=80", "--udp-port=80"],
                                  readinessProbe=probes.http_probe("/hostName", 80, periodSeconds=3))
    deployment = workloads.deployment(SERVICE, 1, labels, [netexec])
    # So as not to race with kube-proxy when scaling.
    deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 3
    return target.place(deployment)


def windows_tester_pod(target: Target) -> dict[str, Any]:
    return target.place(manifests.network_test_pod(target.image("agnhost"), "windows"))


def linux_tester_pod(target: Target) -> dict[str, Any]:
    return manifests.on_linux(manifests.network_test_pod(target.image("nginx", os="linux"), "linux"),
                              target.placement.simulated_nodes)


def run_windows_backends(api: client.ApiClient, namespace: str, target: Target, labels: dict[str, str]) -> None:
    """jig.Run with upstream's Windows nodeSelector tweak: one agnhost netexec replica, Ready on /hostName."""
    retry.call(workloads.apps(api).create_namespaced_deployment, namespace, backends_deployment(target, labels))
    workloads.wait_for_deployment_complete(api, namespace, SERVICE, timeout=pods.POD_START_TIMEOUT)


def node_port_of(service: client.V1Service) -> int:
    ports = (service.spec.ports if service.spec else None) or []
    return int(ports[0].node_port or 0)


def ip_family_of(service: client.V1Service) -> str:
    families = (service.spec.ip_families if service.spec else None) or ["IPv4"]
    return str(families[0])


def node_ips(node: client.V1Node, family: str) -> list[str]:
    """e2enode.GetAddressesByTypeAndFamily for InternalIP."""
    addresses = (node.status.addresses if node.status else None) or []
    return [a.address for a in addresses if a.type == "InternalIP" and (":" in a.address) == (family == "IPv6")]


def real_nodes(api: client.ApiClient, os_name: str | None = None) -> list[client.V1Node]:
    """Ready, schedulable nodes that run containers: a simulated node's IP leads nowhere."""
    return [n for n in nodes.list_nodes(api) if nodes.is_schedulable(n) and not nodes.is_simulated(n)
            and (os_name is None or nodes.os_of(n) == os_name)]


def url(ip: str, port: int) -> str:
    return f"http://{connectivity.host_port(ip, port)}"


def windows_client(api: client.ApiClient, namespace: str, target: Target) -> str:
    """The Windows testing pod (createTestPod with agnhost), checked to carry the Windows nodeSelector."""
    tester = pods.start(api, namespace, windows_tester_pod(target), state="Ready")
    selector = (tester.spec.node_selector if tester.spec else None) or {}
    # Admission controllers may sometimes do the wrong thing.
    assert selector.get(OS_LABEL) == "windows", f"pod.spec.nodeSelector: {selector}"
    return objects.name_of(tester)


@windows_pods(lambda target: [backends_deployment(target, connectivity.jig_labels(SERVICE)),
                             windows_tester_pod(target)], upstream="test/e2e/windows/service.go:52-92")
@service_tests.it("should be able to create a functioning NodePort service for Windows",
                  twin="[sig-windows] Services should be able to create a functioning NodePort service for Windows",
                  category="Core.Network", needs=[Capability.WINDOWS_KERNEL, Capability.NODE_PORTS],
                  images=["agnhost"])
def test_node_port_service_for_windows(api: client.ApiClient, namespace: str, target: Target) -> None:
    """A Windows pod reaches a Windows-backed Service through a node IP and the NodePort."""
    nodes.skip_unless_target_os_is_windows(target.os)
    labels = connectivity.jig_labels(SERVICE)
    service = create_node_port_service(api, namespace, labels)
    candidates = real_nodes(api)
    assert candidates, "no Ready, schedulable node that runs containers"
    node = random.choice(candidates)
    ips = node_ips(node, ip_family_of(service))
    assert ips, f"node {objects.name_of(node)} has no {ip_family_of(service)} InternalIP"
    run_windows_backends(api, namespace, target, labels)
    tester = windows_client(api, namespace, target)
    connectivity.assert_consistent_connectivity(
        api, namespace, tester, container="windows-container",
        command=connectivity.windows_check(url(ips[0], node_port_of(service))),
        max_tries=connectivity.INTERNAL_MAX_TRIES)


@windows_pods(lambda target: [backends_deployment(target, connectivity.jig_labels(SERVICE)), windows_tester_pod(target),
                             linux_tester_pod(target)],
              upstream="no twin: KEP-116 (NodePort on Linux and Windows node IPs), pods of service.go:52-92")
@service_tests.it("should be reachable through a NodePort on both Linux and Windows node IPs",
                  category="Core.Network", images=["agnhost", "nginx"],
                  needs=[Capability.LINUX_AND_WINDOWS_CONTAINERS, Capability.NODE_PORTS])
def test_node_port_on_linux_and_windows_node_ips(api: client.ApiClient, namespace: str, target: Target) -> None:
    """KEP-116's 'NodePort on both Linux and Windows node IPs': the Windows-backed NodePort answers on a Linux
    node's IP and on a Windows node's IP, to a Windows pod and to a Linux pod alike."""
    nodes.skip_unless_target_os_is_windows(target.os)
    labels = connectivity.jig_labels(SERVICE)
    service = create_node_port_service(api, namespace, labels)
    family, port = ip_family_of(service), node_port_of(service)
    addresses = {}
    for os_name in ("linux", "windows"):
        ips = [ip for n in real_nodes(api, os_name) for ip in node_ips(n, family)]
        assert ips, f"no Ready {os_name} node that runs containers has a {family} InternalIP"
        addresses[os_name] = ips[0]
    run_windows_backends(api, namespace, target, labels)
    windows_tester = windows_client(api, namespace, target)
    linux_tester = pods.start(api, namespace, linux_tester_pod(target), state="Ready")
    for ip in addresses.values():
        connectivity.assert_consistent_connectivity(
            api, namespace, windows_tester, container="windows-container",
            command=connectivity.windows_check(url(ip, port)), max_tries=connectivity.INTERNAL_MAX_TRIES)
        connectivity.assert_consistent_connectivity(
            api, namespace, objects.name_of(linux_tester), container="linux-container",
            command=connectivity.linux_check(ip, port), max_tries=connectivity.INTERNAL_MAX_TRIES)
