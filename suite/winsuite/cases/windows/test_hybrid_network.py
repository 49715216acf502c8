"""Hybrid cluster networking (hybrid_network.go): Linux and Windows pods reach each other and the Internet."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Feature
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import connectivity
from winsuite.k8s import manifests
from winsuite.k8s import nodes
from winsuite.k8s import objects
from winsuite.k8s import pods

hybrid = Describe(Area("sig-windows"), "Hybrid cluster network").describe("for all supported CNIs")
TWIN = "[sig-windows] Hybrid cluster network for all supported CNIs "


def linux_test_pod(target: Target) -> dict[str, Any]:
    return manifests.on_linux(manifests.network_test_pod(target.image("nginx", os="linux"), "linux"),
                              target.placement.simulated_nodes)


def windows_test_pod(target: Target, *args: str) -> dict[str, Any]:
    return target.place(manifests.network_test_pod(target.image("agnhost"), "windows", *args))


@windows_pods(lambda target: [linux_test_pod(target), windows_test_pod(target, "test-webserver")],
              upstream="test/e2e/windows/hybrid_network.go:53-73,110-135")
@hybrid.it("should have stable networking for Linux and Windows pods",
           twin=TWIN + "should have stable networking for Linux and Windows pods",
           category="Core.Network", needs=[Capability.LINUX_AND_WINDOWS_CONTAINERS], images=["nginx", "agnhost"])
def test_linux_and_windows_pods_reach_each_other(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    linux_pod = pods.start(api, namespace, linux_test_pod(target), state="Ready")
    windows_pod = pods.start(api, namespace, windows_test_pod(target, "test-webserver"), state="Ready")
    # Linux to Windows, then Windows to Linux.
    connectivity.assert_consistent_connectivity(
        api, namespace, objects.name_of(linux_pod), container="linux-container",
        command=connectivity.linux_check(pods.pod_ip(windows_pod), 80), max_tries=connectivity.INTERNAL_MAX_TRIES)
    connectivity.assert_consistent_connectivity(
        api, namespace, objects.name_of(windows_pod), container="windows-container",
        command=connectivity.windows_check(pods.pod_ip(linux_pod)), max_tries=connectivity.INTERNAL_MAX_TRIES)


@windows_pods(lambda target: [linux_test_pod(target)], upstream="test/e2e/windows/hybrid_network.go:75-84,110-135")
@hybrid.it("should provide Internet connection for Linux containers", Feature("Networking-IPv4"),
           twin=TWIN + "should provide Internet connection for Linux containers [Feature:Networking-IPv4]",
           category="Core.Network", images=["nginx"],
           needs=[Capability.LINUX_AND_WINDOWS_CONTAINERS, Capability.EXTERNAL_NETWORK])
def test_linux_pods_reach_the_internet(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    linux_pod = pods.start(api, namespace, linux_test_pod(target), state="Ready")
    # 8.8.8.8:53 (Google's DNS) stands for "the Internet", as upstream has it.
    connectivity.assert_consistent_connectivity(
        api, namespace, objects.name_of(linux_pod), container="linux-container",
        command=connectivity.linux_check("8.8.8.8", 53), max_tries=connectivity.EXTERNAL_MAX_TRIES)


@windows_pods(lambda target: [windows_test_pod(target)], upstream="test/e2e/windows/hybrid_network.go:86-95,110-139")
@hybrid.it("should provide Internet connection and DNS for Windows containers", Feature("Networking-IPv4"),
           Feature("Networking-DNS"),
           twin=TWIN + "should provide Internet connection and DNS for Windows containers "
                       "[Feature:Networking-IPv4] [Feature:Networking-DNS]",
           category="Core.Network", images=["agnhost"],
           needs=[Capability.WINDOWS_KERNEL, Capability.CLUSTER_DNS, Capability.EXTERNAL_NETWORK])
def test_windows_pods_reach_the_internet_by_name(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    windows_pod = pods.start(api, namespace, windows_test_pod(target), state="Ready")
    connectivity.assert_consistent_connectivity(
        api, namespace, objects.name_of(windows_pod), container="windows-container",
        command=connectivity.windows_check("www.google.com"), max_tries=connectivity.EXTERNAL_MAX_TRIES)
