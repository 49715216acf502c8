"""Service types: ExternalName conversions, headless Services, Services reached from the other OS.

The conversions port test/e2e/network/service.go; headless and cross-OS Services are KEP-116 "What works today"
items upstream has no OS-agnostic test for.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import Target
from winsuite.authoring.targeting import place_pod
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import connectivity
from winsuite.k8s import pods
from winsuite.k8s import services
from winsuite.k8s import waits
from winsuite.k8s import workloads

services_ = Describe(Area("sig-network"), "Services")

NEEDS = [Capability.SERVICES, Capability.EXEC, Capability.CLUSTER_DNS]

HTTP_TO_SERVE_HOSTNAME = {"port": 80, "name": "http", "protocol": "TCP", "targetPort": 9376}
SERVE_TCP_AND_UDP = ("--http=false", "--tcp", "--udp")


def update_service(api: client.ApiClient, namespace: str, name: str,
                   mutate: Callable[[dict[str, Any]], None]) -> client.V1Service:
    """TestJig.UpdateService: read, change (as the API's JSON), write back; retried on conflicts."""
    core = pods.core(api)

    def as_json(svc: Any) -> dict[str, Any]:
        body: dict[str, Any] = api.sanitize_for_serialization(svc)
        mutate(body)
        return body

    return workloads.update_with_retries(lambda: as_json(core.read_namespaced_service(name, namespace)),
                                         lambda body: core.replace_namespaced_service(name, namespace, body),
                                         lambda body: None)


def external_name_service(api: client.ApiClient, namespace: str, name: str, labels: dict[str, str]) -> None:
    """TestJig.CreateExternalNameService: no ClusterIP is allocated."""
    svc = services.create(api, namespace, {"metadata": {"name": name, "labels": labels}, "spec": {
        "selector": labels, "externalName": "foo.example.com", "type": "ExternalName"}})
    assert not svc.spec.cluster_ip, f"unexpected ClusterIP {svc.spec.cluster_ip} for an ExternalName service"


def to_external_name(api: client.ApiClient, namespace: str, name: str, target: Target) -> client.V1Service:
    """Point the Service at another, serving one (createAndGetExternalServiceFQDN) by its FQDN."""
    services.create(api, namespace, {"metadata": {"name": "externalsvc"}, "spec": {
        "selector": {"name": "externalsvc"}, "ports": [{"port": 80, "targetPort": 9376, "protocol": "TCP"}]}})
    connectivity.create_service_pods(api, namespace, target, "externalsvc", {"name": "externalsvc"}, 2)
    fqdn = f"externalsvc.{namespace}.svc.{connectivity.CLUSTER_DOMAIN}"

    def external(spec: dict[str, Any]) -> None:
        spec["spec"].update(type="ExternalName", externalName=fqdn)

    svc = update_service(api, namespace, name, external)
    assert not svc.spec.cluster_ip, f"Spec.ClusterIP was not cleared: {svc.spec.cluster_ip}"
    return svc


def from_external_name(api: client.ApiClient, namespace: str, target: Target, kind: str) -> client.V1Service:
    """An ExternalName Service turned into `kind` with a port to serve-hostname replicas behind it."""
    name, labels = "externalname-service", connectivity.jig_labels("externalname-service")
    external_name_service(api, namespace, name, labels)

    def retype(body: dict[str, Any]) -> None:
        body["spec"].update(type=kind, externalName=None, ports=[HTTP_TO_SERVE_HOSTNAME])

    svc = update_service(api, namespace, name, retype)
    connectivity.create_service_pods(api, namespace, target, name, labels, 2, *SERVE_TCP_AND_UDP)
    return svc


def from_external_name_pods(target: Target) -> list[dict[str, Any]]:
    name = "externalname-service"
    return [connectivity.serve_hostname_deployment(target, name, connectivity.jig_labels(name), 2, *SERVE_TCP_AND_UDP),
            connectivity.exec_pod_manifest(target)]


def to_external_name_pods(target: Target) -> list[dict[str, Any]]:
    return [connectivity.serve_hostname_deployment(target, "externalsvc", {"name": "externalsvc"}, 2),
            connectivity.exec_pod_manifest(target)]


def headless_pods(target: Target) -> list[dict[str, Any]]:
    labels = connectivity.jig_labels("headless")
    return [*(connectivity.labelled_agnhost_pod(target, f"backend-{i}", labels, [{"containerPort": 8080}],
                                                "netexec", "--http-port", "8080") for i in range(2)),
            connectivity.exec_pod_manifest(target)]


def cross_os_pods(target: Target) -> list[dict[str, Any]]:
    return [connectivity.serve_hostname_deployment(target, "cross-os", connectivity.jig_labels("cross-os"), 2),
            connectivity.exec_pod_manifest(OtherOS(target), "other-os-client")]


UPSTREAM = "test/e2e/network/service.go:"


@windows_pods(from_external_name_pods, upstream=UPSTREAM + "1423-1460")
@services_.it("should be able to change the type from ExternalName to ClusterIP", Conformance,
              twin="[sig-network] Services should be able to change the type from ExternalName to ClusterIP "
                   "[Conformance]",
              needs=NEEDS, images=["agnhost"], category="Core.Network")
def test_external_name_to_cluster_ip(api: client.ApiClient, namespace: str, target: Target) -> None:
    svc = from_external_name(api, namespace, target, "ClusterIP")
    connectivity.exec_pod(api, namespace, target).check_service_reachability(svc)


@windows_pods(from_external_name_pods, upstream=UPSTREAM + "1462-1498")
@services_.it("should be able to change the type from ExternalName to NodePort", Conformance,
              twin="[sig-network] Services should be able to change the type from ExternalName to NodePort "
                   "[Conformance]",
              needs=[*NEEDS, Capability.NODE_PORTS], images=["agnhost"], category="Core.Network")
def test_external_name_to_node_port(api: client.ApiClient, namespace: str, target: Target) -> None:
    svc = from_external_name(api, namespace, target, "NodePort")
    prober = connectivity.exec_pod(api, namespace, target)
    prober.check_service_reachability(svc, connectivity.node_ips(target.facts.nodes))


@windows_pods(to_external_name_pods, upstream=UPSTREAM + "1500-1538")
@services_.it("should be able to change the type from ClusterIP to ExternalName", Conformance,
              twin="[sig-network] Services should be able to change the type from ClusterIP to ExternalName "
                   "[Conformance]",
              needs=NEEDS, images=["agnhost"], category="Core.Network")
def test_cluster_ip_to_external_name(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "clusterip-service"
    connectivity.create_tcp_service(api, namespace, name, connectivity.jig_labels(name),
                                    [{"protocol": "TCP", "port": 80}])
    svc = to_external_name(api, namespace, name, target)
    connectivity.exec_pod(api, namespace, target).check_service_reachability(svc)


@windows_pods(to_external_name_pods, upstream=UPSTREAM + "1540-1585")
@services_.it("should be able to change the type from NodePort to ExternalName", Conformance,
              twin="[sig-network] Services should be able to change the type from NodePort to ExternalName "
                   "[Conformance]",
              needs=NEEDS, images=["agnhost"], category="Core.Network")
def test_node_port_to_external_name(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "nodeport-service"
    connectivity.create_tcp_service(api, namespace, name, connectivity.jig_labels(name),
                                    [{"protocol": "TCP", "port": 80}], type="NodePort")
    svc = to_external_name(api, namespace, name, target)
    assert all(not port.node_port for port in svc.spec.ports or []), f"node ports not released: {svc.spec.ports}"
    connectivity.exec_pod(api, namespace, target).check_service_reachability(svc)


IPV4 = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b")


@windows_pods(headless_pods, upstream="no twin: KEP-116 (headless Services on Windows)")
@services_.it("should resolve a headless service to the addresses of its ready pods",
              needs=[Capability.EXEC, Capability.CLUSTER_DNS], images=["agnhost"], category="Core.Network")
def test_headless_service(api: client.ApiClient, namespace: str, target: Target) -> None:
    name, labels = "headless", connectivity.jig_labels("headless")
    svc = services.create(api, namespace, {"metadata": {"name": name}, "spec": {
        "clusterIP": "None", "selector": labels, "ports": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}]}})
    assert svc.spec.cluster_ip == "None", f"a headless service got ClusterIP {svc.spec.cluster_ip}"
    backends = [connectivity.create_pod_or_fail(api, namespace, target, f"backend-{i}", labels,
                                                [{"containerPort": 8080}], "netexec", "--http-port", "8080")
                for i in range(2)]
    wanted = {p.status.pod_ip for p in backends}
    connectivity.wait_for_endpoint_pods(api, namespace, name, *(p.metadata.name for p in backends))

    prober = connectivity.exec_pod(api, namespace, target)
    fqdn = f"{name}.{namespace}.svc.{connectivity.CLUSTER_DOMAIN}"

    def resolves_to_pods() -> None:
        result = pods.exec_(api, namespace, prober.pod, ["nslookup", fqdn]).check()
        found = set(IPV4.findall(result.stdout))
        assert wanted <= found, f"nslookup {fqdn} answered {sorted(found)}, want the pod IPs {sorted(wanted)}"

    waits.poll(f"{fqdn} to resolve to the pod IPs {sorted(wanted)}", resolves_to_pods,
               timeout=connectivity.REACHABILITY_TIMEOUT)
    for pod in backends:
        prober.wait_for_hostname(f"{pod.status.pod_ip}:8080", pod.metadata.name)


@dataclasses.dataclass(frozen=True)
class OtherOS:
    """Images and placement for the OS that is not the run's target, where the client pods go."""

    target: Target

    @property
    def os(self) -> str:
        return "linux" if self.target.os == "windows" else "windows"

    def image(self, image_id: str, os: str | None = None) -> str:
        return self.target.image(image_id, os=os or self.os)

    def place(self, obj: dict[str, Any]) -> dict[str, Any]:
        return place_pod(obj, dataclasses.replace(self.target.placement, target_os=self.os, windows_build=None))


@windows_pods(cross_os_pods, upstream="no twin: KEP-116 (Services across Linux and Windows pods)")
@services_.it("should be reachable from a pod of the other operating system",
              needs=[Capability.LINUX_AND_WINDOWS_CONTAINERS, Capability.SERVICES, Capability.CLUSTER_DNS],
              images=["agnhost"], category="Core.Network")
def test_cross_os_service(api: client.ApiClient, namespace: str, target: Target) -> None:
    name, labels = "cross-os", connectivity.jig_labels("cross-os")
    svc = connectivity.create_tcp_service(api, namespace, name, labels, [HTTP_TO_SERVE_HOSTNAME])
    backends = connectivity.create_service_pods(api, namespace, target, name, labels, 2)
    prober = connectivity.exec_pod(api, namespace, OtherOS(target), "other-os-client")
    prober.check_service_reachability(svc)
    prober.wait_for_backends(svc.spec.cluster_ip, 80, backends)
