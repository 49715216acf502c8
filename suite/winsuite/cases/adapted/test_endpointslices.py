"""EndpointSlice (test/e2e/network/endpointslice.go): the controller's slices, the API, custom slices routed to."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import Target
from winsuite.k8s import connectivity
from winsuite.k8s import manifests
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import services
from winsuite.k8s.services import SERVICE_NAME_LABEL
from winsuite.k8s.waits import wait_for_set
from winsuite.k8s.workloads import MERGE_PATCH
from winsuite.k8s.workloads import EventStream

endpoint_slices = Describe(Area("sig-network"), "EndpointSlice")

CONTROLLER = "endpointslice-controller.k8s.io"
SLICE_TIMEOUT = 120.0


def discovery(api: client.ApiClient) -> client.DiscoveryV1Api:
    return client.DiscoveryV1Api(api)


def wait_for_slices(api: client.ApiClient, namespace: str, service: str, what: str,
                    condition: Any, timeout: float = SLICE_TIMEOUT) -> list[client.V1EndpointSlice]:
    return wait_for_set(discovery(api).list_namespaced_endpoint_slice, namespace=namespace,
                        label_selector=f"{SERVICE_NAME_LABEL}={service}", what=what, condition=condition,
                        timeout=timeout, describe=lambda items: repr([(s.metadata.name, s.endpoints) for s in items]))


@endpoint_slices.it("should create and delete EndpointSlices for a Service with a selector that matches no pods",
                    Conformance,
                    twin="[sig-network] EndpointSlice should create and delete EndpointSlices for a Service with a "
                         "selector that matches no pods [Conformance]", category="Core.Network")
def test_empty_selector(api: client.ApiClient, namespace: str) -> None:
    name = "example-empty-selector"
    services.create(api, namespace, {"metadata": {"name": name}, "spec": {
        "selector": {"does-not-match-anything": "endpoints-and-endpoint-slices-should-still-be-created"},
        "ports": [{"name": "example", "port": 80, "protocol": "TCP"}]}})
    found = wait_for_slices(api, namespace, name, f"an EndpointSlice for service {name}", bool)[0]
    managed_by = (found.metadata.labels or {}).get("endpointslice.kubernetes.io/managed-by")
    assert managed_by == CONTROLLER, f"expected the slice to be managed by {CONTROLLER}, got {managed_by}"
    assert not found.endpoints, f"expected the slice to have 0 endpoints, got {found.endpoints}"
    pods.core(api).delete_namespaced_service(name, namespace)
    # The garbage collector takes the slice; upstream allows it 90 seconds.
    wait_for_slices(api, namespace, name, f"the EndpointSlices of {name} to be deleted", lambda items: not items,
                    timeout=90)


def expect_slices(api: client.ApiClient, namespace: str, svc: Any, expected: list[Any], slices: int,
                  named_port: bool) -> None:
    """expectEndpointSlices: at least `slices` slices whose endpoints are the pods, with matching ports."""
    found = wait_for_slices(api, namespace, svc.metadata.name, f"{slices} EndpointSlice(s) of {svc.metadata.name}",
                            lambda items: len(items) >= slices
                            and sum(len(s.endpoints or []) for s in items) >= len(expected))
    by_ip = {p.status.pod_ip: p for p in expected}
    addresses = set()
    for each in found:
        assert len(each.ports or []) == len(svc.spec.ports), f"slice ports {each.ports} for {svc.spec.ports}"
        if not named_port:
            for slice_port, svc_port in zip(each.ports, svc.spec.ports, strict=True):
                assert (slice_port.name, slice_port.protocol, slice_port.port) == \
                    (svc_port.name, svc_port.protocol, svc_port.target_port), f"{slice_port} for {svc_port}"
        for endpoint in each.endpoints or []:
            assert endpoint.addresses, "an endpoint without addresses"
            pod = by_ip.get(endpoint.addresses[0])
            assert pod is not None, f"unexpected address {endpoint.addresses[0]}"
            ref = endpoint.target_ref
            assert ref is not None and (ref.kind, ref.namespace, ref.name, ref.uid) == \
                ("Pod", pod.metadata.namespace, pod.metadata.name, pod.metadata.uid), f"target ref {ref} of {pod}"
            addresses.add(endpoint.addresses[0])
            if named_port:
                container_port = next(p for p in pod.spec.containers[0].ports
                                      if p.name == svc.spec.ports[0].target_port)
                assert each.ports[0].port == container_port.container_port, f"{each.ports[0]} for {container_port}"
                assert each.ports[0].name == svc.spec.ports[0].name, f"{each.ports[0]} for {svc.spec.ports[0]}"
    assert len(addresses) == len(expected), f"expected {len(expected)} addresses, got {sorted(addresses)}"


@endpoint_slices.it("should create Endpoints and EndpointSlices for Pods matching a Service", Conformance,
                    twin="[sig-network] EndpointSlice should create Endpoints and EndpointSlices for Pods matching a "
                         "Service [Conformance]",
                    needs=[Capability.RUNS_CONTAINERS], images=["nginx"], category="Core.Network")
def test_slices_for_matching_pods(api: client.ApiClient, namespace: str, target: Target) -> None:
    def nginx(name: str, labels: dict[str, str], ports: list[dict[str, Any]]) -> None:
        container = manifests.container("container1", target.image("nginx"), ports=ports)
        pods.create(api, namespace, target.place(manifests.pod(name, [container], labels=labels)))

    nginx("pod1", {"pod1": "on", "shared12": "on"}, [{"name": "example-name", "containerPort": 3000}])
    nginx("pod2", {"pod2": "on", "shared12": "on"}, [{"name": "example-name", "containerPort": 3001},
                                                     {"name": "other-port", "containerPort": 3002}])
    svc1 = services.create(api, namespace, {"metadata": {"name": "example-int-port"}, "spec": {
        "selector": {"pod1": "on"}, "publishNotReadyAddresses": True,
        "ports": [{"name": "example", "port": 80, "targetPort": 3000, "protocol": "TCP"}]}})
    svc2 = services.create(api, namespace, {"metadata": {"name": "example-named-port"}, "spec": {
        "selector": {"shared12": "on"}, "publishNotReadyAddresses": True,
        "ports": [{"name": "http", "port": 80, "targetPort": "example-name", "protocol": "TCP"}]}})
    with_ips = [pods.wait_until(api, namespace, name, "to have an IP", lambda p: bool(p.status.pod_ips), timeout=180)
                for name in ("pod1", "pod2")]

    expect_slices(api, namespace, svc1, with_ips[:1], 1, named_port=False)
    expect_slices(api, namespace, svc2, with_ips, 2, named_port=True)
    for each in retry.call(discovery(api).list_namespaced_endpoint_slice, namespace,
                           label_selector=f"{SERVICE_NAME_LABEL}=example-named-port").items:
        discovery(api).delete_namespaced_endpoint_slice(each.metadata.name, namespace)
    expect_slices(api, namespace, svc2, with_ips, 2, named_port=True)


@endpoint_slices.it("should support creating EndpointSlice API operations", Conformance,
                    twin="[sig-network] EndpointSlice should support creating EndpointSlice API operations "
                         "[Conformance]", category="Core.Network")
def test_api_operations(api: client.ApiClient, namespace: str) -> None:
    groups = client.ApisApi(api).get_api_versions().groups
    assert any(g.name == "discovery.k8s.io" and any(v.version == "v1" for v in g.versions) for g in groups), \
        "expected the discovery.k8s.io/v1 group/version in /apis"
    group = client.DiscoveryApi(api).get_api_group()
    assert any(v.version == "v1" for v in group.versions), f"expected v1 in {group.versions}"
    resources = discovery(api).get_api_resources().resources
    assert any(r.name == "endpointslices" for r in resources), "expected endpointslices in /apis/discovery.k8s.io/v1"

    eps, label = discovery(api), f"special-label={namespace}"
    template = {"metadata": {"generateName": "e2e-example-ing", "labels": {"special-label": namespace}},
                "addressType": "IPv4", "endpoints": [{"addresses": ["1.2.3.4", "5.6.7.8"]},
                                                     {"addresses": ["2.2.3.4", "6.6.7.8"]}]}
    eps.create_namespaced_endpoint_slice(namespace, template)
    eps.create_namespaced_endpoint_slice(namespace, template)
    created = eps.create_namespaced_endpoint_slice(namespace, template)
    name = created.metadata.name
    got = eps.read_namespaced_endpoint_slice(name, namespace)
    assert got.metadata.uid == created.metadata.uid and int(got.metadata.resource_version) > 0
    listed = eps.list_namespaced_endpoint_slice(namespace, label_selector=label)
    assert len(listed.items) == 3, "filtered list should have 3 items"
    assert len(eps.list_endpoint_slice_for_all_namespaces(label_selector=label).items) == 3, \
        "filtered cluster-wide list should have 3 items"

    with EventStream(eps.list_namespaced_endpoint_slice, namespace=namespace, label_selector=label,
                     resource_version=listed.metadata.resource_version) as watched:
        patched = eps.patch_namespaced_endpoint_slice(name, namespace, {"metadata": {"annotations": {
            "patched": "true"}}}, _content_type=MERGE_PATCH)
        assert (patched.metadata.annotations or {}).get("patched") == "true", "the patch lost its annotation"
        assert int(patched.metadata.resource_version) > int(created.metadata.resource_version)
        updated = eps.read_namespaced_endpoint_slice(name, namespace)
        updated.metadata.annotations = {**(updated.metadata.annotations or {}), "updated": "true"}
        updated = eps.replace_namespaced_endpoint_slice(name, namespace, updated)
        assert (updated.metadata.annotations or {}).get("updated") == "true", "the update lost its annotation"

        def modified_with_patch(kind: str, obj: Any) -> bool:
            assert kind == "MODIFIED", f"unexpected {kind} event for {obj.metadata.name}"
            return (obj.metadata.annotations or {}).get("patched") == "true"

        watched.until("watch events with the patched annotation", modified_with_patch)

    eps.delete_namespaced_endpoint_slice(name, namespace)
    try:
        eps.read_namespaced_endpoint_slice(name, namespace)
        raise AssertionError(f"EndpointSlice {name} still readable after deletion")
    except client.exceptions.ApiException as err:
        assert err.status == 404, f"expected 404, got {err.status}"
    left = eps.list_namespaced_endpoint_slice(namespace, label_selector=label).items
    assert len(left) == 2 and all(s.metadata.name != name for s in left), "filtered list should have 2 items"
    eps.delete_collection_namespaced_endpoint_slice(namespace, label_selector=label)
    left = eps.list_namespaced_endpoint_slice(namespace, label_selector=label).items
    assert not left, f"filtered list should be empty: {[s.metadata.name for s in left]}"


def selectorless_service(api: client.ApiClient, namespace: str) -> client.V1Service:
    return services.create(api, namespace, {"metadata": {"name": "example-custom-endpoints"}, "spec": {
        "ports": [{"name": "port80", "port": 80, "protocol": "TCP"},
                  {"name": "port81", "port": 81, "protocol": "TCP"}]}})


def server_pod(api: client.ApiClient, namespace: str, target: Target, name: str, *ports: int) -> client.V1Pod:
    """An agnhost netexec container per port (no UDP), Ready, with its IP."""
    netexecs = [manifests.agnhost_container(target.image("agnhost"), f"container-handle-{port}-request", "netexec",
                                            "--http-port", str(port), "--udp-port", "-1",
                                            ports=[{"containerPort": port, "protocol": "TCP"}]) for port in ports]
    manifest = manifests.pod(name, netexecs, terminationGracePeriodSeconds=0)
    pod = pods.start(api, namespace, target.place(manifest), state="Ready")
    assert pod.status.pod_ip, f"PodIP not assigned for pod {name}"
    return pod


def custom_slice(namespace: str, ip: str, port_name: str, port: int) -> dict[str, Any]:
    # Any manager but the controller; label values stop at 63 characters, and namespaces here are long.
    manager = f"e2e-test{namespace}"[:63].rstrip("-")
    labels = {SERVICE_NAME_LABEL: "example-custom-endpoints", "endpointslice.kubernetes.io/managed-by": manager}
    return {"metadata": {"generateName": "e2e-custom-slice", "labels": labels},
        "addressType": "IPv4", "endpoints": [{"addresses": [ip], "conditions": {"ready": True}}],
        "ports": [{"name": port_name, "port": port, "protocol": "TCP"}]}


@endpoint_slices.it("should support a Service with multiple ports specified in multiple EndpointSlices", Conformance,
                    twin="[sig-network] EndpointSlice should support a Service with multiple ports specified in "
                         "multiple EndpointSlices [Conformance]",
                    needs=[Capability.SERVICES, Capability.EXEC], images=["agnhost"], category="Core.Network")
def test_multiple_ports_in_slices(api: client.ApiClient, namespace: str, target: Target) -> None:
    svc = selectorless_service(api, namespace)
    pod = server_pod(api, namespace, target, "pod-handle-http-request", 8090, 9090)
    for port_name, port in (("port80", 8090), ("port81", 9090)):
        discovery(api).create_namespaced_endpoint_slice(namespace, custom_slice(namespace, pod.status.pod_ip,
                                                                                port_name, port))
    prober = connectivity.exec_pod(api, namespace, target, "pause-pod-0")
    for port in (80, 81):
        prober.wait_for_hostname(connectivity.host_port(svc.spec.cluster_ip, port), "pod-handle-http-request")


@endpoint_slices.it("should support a Service with multiple endpoint IPs specified in multiple EndpointSlices",
                    Conformance,
                    twin="[sig-network] EndpointSlice should support a Service with multiple endpoint IPs specified "
                         "in multiple EndpointSlices [Conformance]",
                    needs=[Capability.SERVICES, Capability.EXEC], images=["agnhost"], category="Core.Network")
def test_multiple_ips_in_slices(api: client.ApiClient, namespace: str, target: Target) -> None:
    svc = selectorless_service(api, namespace)
    first = server_pod(api, namespace, target, "pod1-handle-http-request", 8090)
    second = server_pod(api, namespace, target, "pod2-handle-http-request", 8090)
    for pod, port_name in ((first, "port80"), (second, "port81")):
        discovery(api).create_namespaced_endpoint_slice(namespace, custom_slice(namespace, pod.status.pod_ip,
                                                                                port_name, 8090))
    prober = connectivity.exec_pod(api, namespace, target, "pause-pod-0")
    prober.wait_for_hostname(connectivity.host_port(svc.spec.cluster_ip, 80), "pod1-handle-http-request")
    prober.wait_for_hostname(connectivity.host_port(svc.spec.cluster_ip, 81), "pod2-handle-http-request")
