"""Services (test/e2e/network/service.go): endpoints and traffic through ClusterIP and NodePort Services.

Traffic is sent from inside pods of the target OS, through the cluster's Service proxy (kube-proxy or its
Windows equivalent): these tests need Service VIPs on a node that runs containers, and cluster DNS where a
Service is reached by name.
"""

from __future__ import annotations

import uuid

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.steps import step
from winsuite.authoring.target import Target
from winsuite.k8s import connectivity
from winsuite.k8s import manifests
from winsuite.k8s import pods
from winsuite.k8s import services
from winsuite.k8s import workloads
from winsuite.k8s.connectivity import Prober

services_ = Describe(Area("sig-network"), "Services")

NEEDS = [Capability.SERVICES, Capability.EXEC, Capability.CLUSTER_DNS]
SERVE_HOSTNAME_PORT = 9376


def delete_pod(api: client.ApiClient, namespace: str, name: str) -> None:
    pods.delete(api, namespace, name)
    workloads.wait_for_gone(pods.core(api).list_namespaced_pod, name=name, namespace=namespace, what=f"pod {name}")


@services_.it("should serve a basic endpoint from pods", Conformance,
              twin="[sig-network] Services should serve a basic endpoint from pods [Conformance]",
              needs=NEEDS, images=["agnhost"], category="Core.Network")
def test_basic_endpoint(api: client.ApiClient, namespace: str, target: Target) -> None:
    name, labels = "endpoint-test2", connectivity.jig_labels("endpoint-test2")
    step(f"creating service {name} in namespace {namespace}")
    svc = connectivity.create_tcp_service(api, namespace, name, labels, [{"protocol": "TCP", "port": 80}])
    connectivity.wait_for_endpoint_count(api, namespace, name, 0)

    netexec = ("netexec", "--http-port", "80")
    step("creating first endpoint pod for service")
    connectivity.create_pod_or_fail(api, namespace, target, "pod1", labels, [{"containerPort": 80}], *netexec)
    connectivity.wait_for_endpoint_pods(api, namespace, name, "pod1")
    step("Checking if the Service forwards traffic to pod1")
    prober = connectivity.exec_pod(api, namespace, target)
    prober.check_service_reachability(svc)

    step("creating second endpoint pod for service")
    connectivity.create_pod_or_fail(api, namespace, target, "pod2", labels, [{"containerPort": 80}], *netexec)
    connectivity.wait_for_endpoint_pods(api, namespace, name, "pod1", "pod2")
    step("Checking if the Service forwards traffic to pod1 and pod2")
    prober.check_service_reachability(svc)

    step("deleting first endpoint pod")
    pods.delete(api, namespace, "pod1")
    connectivity.wait_for_endpoint_pods(api, namespace, name, "pod2")
    step("Checking if the Service forwards traffic to pod2")
    prober.check_service_reachability(svc)

    step("deleting second endpoint pod")
    pods.delete(api, namespace, "pod2")
    connectivity.wait_for_endpoint_count(api, namespace, name, 0)


@services_.it("should serve multiport endpoints from pods", Conformance,
              twin="[sig-network] Services should serve multiport endpoints from pods [Conformance]",
              needs=NEEDS, images=["agnhost"], category="Core.Network")
def test_multiport_endpoints(api: client.ApiClient, namespace: str, target: Target) -> None:
    name, labels = "multi-endpoint-test", connectivity.jig_labels("multi-endpoint-test")
    ports = [{"name": "portname1", "port": 80, "targetPort": "svc1"},
             {"name": "portname2", "port": 81, "targetPort": "svc2"}]
    step(f"creating service {name} in namespace {namespace}")
    svc = connectivity.create_tcp_service(api, namespace, name, labels, ports)
    connectivity.wait_for_endpoint_count(api, namespace, name, 0)

    step("creating pod1 serving port1")
    connectivity.create_pod_or_fail(api, namespace, target, "pod1", labels, [{"name": "svc1", "containerPort": 100}],
                       "netexec", "--http-port", "100")
    first = ("portname1", "TCP", "pod1", 100)
    connectivity.wait_for_endpoint_ports(api, namespace, name, {first})
    step("creating pod2 serving port2")
    connectivity.create_pod_or_fail(api, namespace, target, "pod2", labels, [{"name": "svc2", "containerPort": 101}],
                       "netexec", "--http-port", "101")
    second = ("portname2", "TCP", "pod2", 101)
    connectivity.wait_for_endpoint_ports(api, namespace, name, {first, second})
    step("Checking if the Service forwards traffic to pods")
    connectivity.exec_pod(api, namespace, target).check_service_reachability(svc)

    step("deleting pod1 serving port1")
    pods.delete(api, namespace, "pod1")
    connectivity.wait_for_endpoint_ports(api, namespace, name, {second})
    step("deleting pod2 serving port2")
    pods.delete(api, namespace, "pod2")
    connectivity.wait_for_endpoint_count(api, namespace, name, 0)


@services_.it("should be able to create a functioning NodePort service", Conformance,
              twin="[sig-network] Services should be able to create a functioning NodePort service [Conformance]",
              needs=[*NEEDS, Capability.NODE_PORTS], images=["agnhost"], category="Core.Network")
def test_nodeport_service(api: client.ApiClient, namespace: str, target: Target) -> None:
    name, labels = "nodeport-test", connectivity.jig_labels("nodeport-test")
    ports = [{"port": 80, "name": "http", "protocol": "TCP", "targetPort": SERVE_HOSTNAME_PORT}]
    svc = connectivity.create_tcp_service(api, namespace, name, labels, ports, type="NodePort")
    connectivity.create_service_pods(api, namespace, target, name, labels, 2, "--http=false", "--tcp", "--udp")
    ips = connectivity.node_ips(target.facts.nodes)
    assert ips, "no node of the target OS that runs containers has an internal IP to test its node port on"
    connectivity.exec_pod(api, namespace, target).check_service_reachability(svc, ips)


@services_.it("should serve endpoints on same port and different protocols", Conformance,
              twin="[sig-network] Services should serve endpoints on same port and different protocols "
                   "[Conformance]",
              needs=[Capability.SERVICES, Capability.EXEC], images=["agnhost"], category="Core.Network")
def test_same_port_different_protocols(api: client.ApiClient, namespace: str, target: Target) -> None:
    name, labels = "multiprotocol-test", {"app": "multiport"}
    tcp = {"name": "tcp-port", "port": 80, "targetPort": 80, "protocol": "TCP"}
    udp = {"name": "udp-port", "port": 80, "targetPort": 80, "protocol": "UDP"}
    svc = services.create(api, namespace, {"metadata": {"name": name, "labels": labels},
                                           "spec": {"type": "ClusterIP", "selector": labels, "ports": [tcp, udp]}})
    connectivity.create_pod_or_fail(api, namespace, target, "pod1", labels,
                       [{"name": "tcp-port", "containerPort": 80, "protocol": "TCP"},
                        {"name": "udp-port", "containerPort": 80, "protocol": "UDP"}],
                       "netexec", "--http-port", "80", "--udp-port", "80")
    connectivity.wait_for_endpoint_ports(api, namespace, name, {("tcp-port", "TCP", "pod1", 80),
                                                                ("udp-port", "UDP", "pod1", 80)})
    prober = connectivity.exec_pod(api, namespace, target)
    ip = svc.spec.cluster_ip
    prober.wait_reachable(ip, 80, "TCP", timeout=30)
    prober.wait_reachable(ip, 80, "UDP", timeout=30)

    core = pods.core(api)
    current = core.read_namespaced_service(name, namespace)
    current.spec.ports = [tcp]
    updated = core.replace_namespaced_service(name, namespace, current)
    assert int(updated.metadata.resource_version) > int(current.metadata.resource_version), \
        "the updated object should have a larger resource version"
    prober.wait_reachable(ip, 80, "TCP", timeout=30)
    prober.wait_unreachable(ip, 80, "UDP", timeout=30)

    current = core.read_namespaced_service(name, namespace)
    current.spec.ports = [udp]
    core.replace_namespaced_service(name, namespace, current)
    prober.wait_reachable(ip, 80, "UDP", timeout=30)
    prober.wait_unreachable(ip, 80, "TCP", timeout=30)


@services_.it("should allow pods to hairpin back to themselves through services",
              twin="[sig-network] Services should allow pods to hairpin back to themselves through services",
              needs=NEEDS, images=["agnhost"], category="Core.Network")
def test_hairpin(api: client.ApiClient, namespace: str, target: Target) -> None:
    name, labels = "hairpin-test", connectivity.jig_labels("hairpin-test")
    svc = connectivity.create_tcp_service(api, namespace, name, labels, [{"protocol": "TCP", "port": 8080}])
    connectivity.create_pod_or_fail(api, namespace, target, "hairpin", labels, [], "netexec", "--http-port", "8080")
    connectivity.wait_for_endpoint_count(api, namespace, name, 1)
    Prober(api, namespace, "hairpin").check_service_reachability(svc)


def serve_hostname_service(api: client.ApiClient, namespace: str, target: Target, name: str) -> tuple[list[str], str]:
    """StartServeHostnameService with 3 replicas: the pods' names and the Service's ClusterIP."""
    svc = services.create(api, namespace, {"metadata": {"name": name}, "spec": {
        "selector": {"name": name}, "ports": [{"port": 80, "targetPort": SERVE_HOSTNAME_PORT, "protocol": "TCP"}]}})
    assert svc.spec.cluster_ip, f"service IP is blank for {name}"
    names = connectivity.create_service_pods(api, namespace, target, name, {"name": name}, 3)
    return sorted(names), svc.spec.cluster_ip


def host_exec_pod(api: client.ApiClient, namespace: str, target: Target, name: str) -> Prober:
    """launchHostExecPod: an agnhost pod in the node's network namespace, Ready."""
    manifest = manifests.agnhost_pod(target.image("agnhost"), name, hostNetwork=True)
    pods.start(api, namespace, target.place(manifest), state="Ready", timeout=connectivity.POD_START_TIMEOUT)
    return Prober(api, namespace, name)


def verify_up(api: client.ApiClient, namespace: str, target: Target, expected: list[str], ip: str) -> None:
    """verifyServeHostnameServiceUp: from the node's network and from a pod's, GETs reach every backend."""
    probers = [host_exec_pod(api, namespace, target, "verify-service-up-host-exec-pod"),
               connectivity.exec_pod(api, namespace, target, f"verify-service-up-exec-pod-{uuid.uuid4().hex[:5]}")]
    for prober in probers:
        prober.wait_for_backends(ip, 80, expected)
    for prober in probers:
        delete_pod(api, namespace, prober.pod)


def verify_down(api: client.ApiClient, namespace: str, target: Target, ip: str) -> None:
    """verifyServeHostnameServiceDown: from the node's network, the Service's IP stops answering."""
    prober = host_exec_pod(api, namespace, target, "verify-service-down-host-exec-pod")
    prober.wait_http_down(ip, 80)
    delete_pod(api, namespace, prober.pod)


@services_.it("should be able to up and down services",
              twin="[sig-network] Services should be able to up and down services",
              needs=[Capability.SERVICES, Capability.EXEC], images=["agnhost"], category="Core.Network")
def test_up_and_down(api: client.ApiClient, namespace: str, target: Target) -> None:
    names1, ip1 = serve_hostname_service(api, namespace, target, "up-down-1")
    names2, ip2 = serve_hostname_service(api, namespace, target, "up-down-2")
    verify_up(api, namespace, target, names1, ip1)
    verify_up(api, namespace, target, names2, ip2)

    workloads.apps(api).delete_namespaced_deployment("up-down-1", namespace)
    pods.core(api).delete_namespaced_service("up-down-1", namespace)
    verify_down(api, namespace, target, ip1)
    verify_up(api, namespace, target, names2, ip2)

    names3, ip3 = serve_hostname_service(api, namespace, target, "up-down-3")
    assert ip2 != ip3, f"service IPs conflict: {ip2}"
    verify_up(api, namespace, target, names2, ip2)
    verify_up(api, namespace, target, names3, ip3)
