"""Service API (test/e2e/network/service.go): listing, the status lifecycle and deleting collections."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from kubernetes import client

from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import services
from winsuite.k8s import workloads
from winsuite.k8s.workloads import MERGE_PATCH
from winsuite.k8s.workloads import STRATEGIC_MERGE_PATCH
from winsuite.k8s.workloads import EventStream

services_ = Describe(Area("sig-network"), "Services")

STATIC = {"test-service-static": "true"}


@services_.it("should find a service from listing all namespaces", Conformance,
              twin="[sig-network] Services should find a service from listing all namespaces [Conformance]",
              category="Core.Network")
def test_find_service_in_all_namespaces(api: client.ApiClient, namespace: str) -> None:
    listed = retry.call(pods.core(api).list_service_for_all_namespaces).items
    assert any(s.metadata.name == "kubernetes" and s.metadata.namespace == "default" for s in listed), \
        "could not find service 'kubernetes' in service list in all namespaces"


@services_.it("should complete a service status lifecycle", Conformance,
              twin="[sig-network] Services should complete a service status lifecycle [Conformance]",
              category="Core.Network")
def test_status_lifecycle(api: client.ApiClient, namespace: str) -> None:
    core, name, selector = pods.core(api), f"test-service-{uuid.uuid4().hex[:5]}", workloads.selector(STATIC)
    version = workloads.listed_version(core.list_service_for_all_namespaces, label_selector=selector)

    def watch_for(what: str, condition: Any) -> None:
        with EventStream(core.list_namespaced_service, namespace=namespace, label_selector=selector,
                         resource_version=version) as events:
            events.until(what, condition, timeout=60)

    # A class no load-balancer controller serves: the test alone writes the status.
    services.create(api, namespace, {"metadata": {"name": name, "labels": STATIC}, "spec": {
        "type": "LoadBalancer", "loadBalancerClass": "example.com/internal-vip",
        "ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 80}]}})
    watch_for("the Service to be added", lambda _, svc: svc.metadata.name == name
              and (svc.metadata.labels or {}).get("test-service-static") == "true")

    core.read_namespaced_service_status(name, namespace)
    core.patch_namespaced_service_status(name, namespace, {
        "metadata": {"annotations": {"patchedstatus": "true"}},
        "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.1"}]}}}, _content_type=MERGE_PATCH)
    watch_for("the Service status to be patched", lambda _, svc: svc.metadata.name == name
              and (svc.metadata.annotations or {}).get("patchedstatus") == "true")

    def add_condition(body: dict[str, Any]) -> None:
        # The Python client's models insist on lastTransitionTime, which upstream's Go test leaves out.
        now = datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()
        body["status"]["conditions"] = [*body["status"].get("conditions", []), {
            "type": "StatusUpdate", "status": "True", "reason": "E2E", "message": "Set from e2e test",
            "lastTransitionTime": now}]

    workloads.update_with_retries(lambda: api.sanitize_for_serialization(core.read_namespaced_service(name, namespace)),
                                  lambda body: core.replace_namespaced_service_status(name, namespace, body),
                                  add_condition)
    watch_for("the Service status to be updated", lambda _, svc: svc.metadata.name == name and any(
        (c.type, c.reason, c.message) == ("StatusUpdate", "E2E", "Set from e2e test")
        for c in svc.status.conditions or []))

    core.patch_namespaced_service(name, namespace, {"metadata": {"labels": {"test-service": "patched"}}},
                                  _content_type=STRATEGIC_MERGE_PATCH)
    watch_for("the Service to be patched", lambda _, svc: svc.metadata.name == name
              and (svc.metadata.labels or {}).get("test-service") == "patched")

    core.delete_namespaced_service(name, namespace)
    watch_for("the Service to be deleted", lambda kind, svc: kind == "DELETED" and svc.metadata.name == name)


@services_.it("should delete a collection of services", Conformance,
              twin="[sig-network] Services should delete a collection of services [Conformance]",
              category="Core.Network")
def test_delete_collection(api: client.ApiClient, namespace: str) -> None:
    core = pods.core(api)
    for letter, label, port in (("a", "delete", 8001), ("b", "delete", 8002), ("c", "keep", 8003)):
        services.create(api, namespace, {
            "metadata": {"name": f"e2e-svc-{letter}-{uuid.uuid4().hex[:5]}", "labels": {"e2e-test-service": label}},
            "spec": {"type": "ClusterIP",
                     "ports": [{"name": "http", "protocol": "TCP", "port": port, "targetPort": port}]}})
    assert len(retry.call(core.list_namespaced_service, namespace).items) == 3, "required count of services"
    core.delete_collection_namespaced_service(namespace, label_selector="e2e-test-service=delete")
    left = retry.call(core.list_namespaced_service, namespace).items
    assert len(left) == 1, f"required count of services after the deletion: {[s.metadata.name for s in left]}"
