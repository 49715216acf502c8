"""ResourceQuota (test/e2e/apimachinery/resource_quota.go): usage of each object kind, scopes, lifecycle.

Quota is admission: the test pods are never scheduled (they select a node label no node has), so these tests
run for real against any API server, the simulated Windows nodes included.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client
from kubernetes.utils.quantity import parse_quantity

from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import Target
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import services
from winsuite.k8s import waits
from winsuite.k8s import workloads
from winsuite.k8s.workloads import STRATEGIC_MERGE_PATCH
from winsuite.k8s.workloads import EventStream

quotas = Describe(Area("sig-api-machinery"), "ResourceQuota")

QUOTA_TIMEOUT = 60.0  # the framework's default Eventually timeout for waitForResourceQuota
EXTENDED_RESOURCE = "example.com/dongle"
Check = Callable[[client.ApiClient, str, Target], None]


def quota_manifest(name: str) -> dict[str, Any]:
    """newTestResourceQuota: hard limits on every object kind and resource the tests count."""
    hard = {"pods": "5", "services": "10", "services.nodeports": "1", "services.loadbalancers": "1",
            "replicationcontrollers": "10", "resourcequotas": "1", "cpu": "1", "memory": "500Mi",
            "configmaps": "10", "secrets": "10", "persistentvolumeclaims": "10", "requests.storage": "10Gi",
            "ephemeral-storage": "50Gi", "gold.storageclass.storage.k8s.io/persistentvolumeclaims": "10",
            "gold.storageclass.storage.k8s.io/requests.storage": "10Gi", "count/replicasets.apps": "5",
            f"requests.{EXTENDED_RESOURCE}": "3"}
    return {"metadata": {"name": name}, "spec": {"hard": hard}}


def scoped_quota(name: str, scope: str) -> dict[str, Any]:
    """newTestResourceQuotaWithScope."""
    hard = {"pods": "5"}
    if scope in ("Terminating", "NotTerminating"):
        hard |= {"requests.cpu": "1", "requests.memory": "500Mi", "limits.cpu": "2", "limits.memory": "1Gi"}
    return {"metadata": {"name": name}, "spec": {"hard": hard, "scopes": [scope]}}


def quota_pod(target: Target, name: str, requests: dict[str, str], limits: dict[str, str]) -> dict[str, Any]:
    """newTestPodForQuota: a pause pod that selects a node label no node has, so it is never scheduled."""
    pause = {"name": "pause", "image": target.image("pause"), "resources": {"requests": requests, "limits": limits}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"nodeSelector": {"x-test.k8s.io/unsatisfiable": "not-schedulable"}, "containers": [pause]}}
    return target.place(pod)


def create_quota(api: client.ApiClient, namespace: str, manifest: dict[str, Any]) -> client.V1ResourceQuota:
    return retry.call(pods.core(api).create_namespaced_resource_quota, namespace, manifest)


def uses(quota: Any, used: dict[str, str]) -> bool:
    """haveUsedResources: every listed resource shows that usage (others are ignored)."""
    actual = quota.status.used
    return actual is not None and all(key in actual and parse_quantity(actual[key]) == parse_quantity(value)
                                      for key, value in used.items())


def wait_for_usage(api: client.ApiClient, namespace: str, name: str, used: dict[str, str]) -> None:
    """waitForResourceQuota."""
    workloads.wait_for_object(pods.core(api).list_namespaced_resource_quota, name=name, namespace=namespace,
                              what=f"resource quota {name} to show usage {used}",
                              condition=lambda quota: uses(quota, used), timeout=QUOTA_TIMEOUT)


def ensure_usage(api: client.ApiClient, namespace: str, name: str, used: dict[str, str]) -> None:
    """ensureResourceQuota: the usage shows and stays so for 10 seconds."""

    def unchanged(items: list[Any]) -> None:
        quota = items[0]
        assert uses(quota, used), f"resource quota {name} usage {quota.status.used} is not {used}"

    waits.hold(pods.core(api).list_namespaced_resource_quota, name=name, namespace=namespace,
               what=f"resource quota {name} to keep usage {used}", check=unchanged, duration=10.0)


def stable_count(list_fn: Callable[..., Any], namespace: str, *, window: float, timeout: float) -> int:
    """How many objects the namespace holds once nothing has been added or deleted for `window` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        listing = retry.call(list_fn, namespace)
        with EventStream(list_fn, namespace=namespace, resource_version=listing.metadata.resource_version) as s:
            if not [kind for kind, _ in s.settle(window) if kind in ("ADDED", "DELETED")]:
                return len(listing.items)
        assert time.monotonic() < deadline, f"the object count in {namespace} did not settle in {timeout:.0f}s"


def quota_with_count(api: client.ApiClient, namespace: str, manifest: dict[str, Any],
                     used: dict[str, str]) -> dict[str, str]:
    """Count the namespace's quotas, create the quota, and wait until its status is calculated."""
    count = stable_count(pods.core(api).list_namespaced_resource_quota, namespace, window=5.0, timeout=30.0)
    create_quota(api, namespace, manifest)
    usage = {"resourcequotas": str(count + 1), **used}
    wait_for_usage(api, namespace, manifest["metadata"]["name"], usage)
    return usage


def check_rejected(create: Callable[[], Any], what: str) -> None:
    with pytest.raises(client.exceptions.ApiException) as err:
        create()
    assert err.value.status == 403, f"{what}: expected a quota rejection (403), got {err.value.status}"


@quotas.it("should create a ResourceQuota and ensure its status is promptly calculated.", Conformance,
           twin="[sig-api-machinery] ResourceQuota should create a ResourceQuota and ensure its status is promptly "
                "calculated. [Conformance]", images=["pause"])
def test_status_promptly_calculated(api: client.ApiClient, namespace: str, target: Target) -> None:
    quota_with_count(api, namespace, quota_manifest("test-quota"), {})


@quotas.it("should create a ResourceQuota and capture the life of a service.", Conformance,
           twin="[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the life of a "
                "service. [Conformance]", images=["pause"], category="Core.Network")
def test_life_of_a_service(api: client.ApiClient, namespace: str, target: Target) -> None:
    usage = quota_with_count(api, namespace, quota_manifest("test-quota"), {})

    def service(name: str, kind: str, **extra: Any) -> dict[str, Any]:
        return {"metadata": {"name": name},
                "spec": {"type": kind, "ports": [{"port": 80, "targetPort": 80}], **extra}}

    services.create(api, namespace, service("test-service", "ClusterIP"))
    services.create(api, namespace, service("test-service-np", "NodePort"))
    check_rejected(lambda: services.create(api, namespace, service("test-service-lb", "LoadBalancer",
                                                                   allocateLoadBalancerNodePorts=True)),
                   "a LoadBalancer Service with a node port beyond the quota")
    wait_for_usage(api, namespace, "test-quota", {**usage, "services": "2", "services.nodeports": "1"})
    core = pods.core(api)
    core.delete_namespaced_service("test-service", namespace)
    core.delete_namespaced_service("test-service-np", namespace)
    wait_for_usage(api, namespace, "test-quota", {**usage, "services": "0", "services.nodeports": "0"})


def life_of_a_counted_object(api: client.ApiClient, namespace: str, resource: str, list_fn: Callable[..., Any],
                             create: Callable[[], Any], delete: Callable[[], Any], window: float) -> None:
    """Secrets and ConfigMaps: the quota allows one more than the namespace has; creating and deleting one
    moves the usage up and back."""
    existing = stable_count(list_fn, namespace, window=window, timeout=max(30.0, 4 * window))
    manifest = quota_manifest("test-quota")
    manifest["spec"]["hard"][resource] = str(existing + 1)
    usage = quota_with_count(api, namespace, manifest, {resource: str(existing)})
    create()
    wait_for_usage(api, namespace, "test-quota", {resource: str(existing + 1)})
    delete()
    wait_for_usage(api, namespace, "test-quota", {**usage, resource: str(existing)})


@quotas.it("should create a ResourceQuota and capture the life of a secret.", Conformance,
           twin="[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the life of a "
                "secret. [Conformance]", images=["pause"])
def test_life_of_a_secret(api: client.ApiClient, namespace: str, target: Target) -> None:
    core = pods.core(api)
    secret = {"metadata": {"name": "test-secret"},
              "stringData": {"data-1": "value-1\n", "data-2": "value-2\n", "data-3": "value-3\n"}}
    life_of_a_counted_object(api, namespace, "secrets", core.list_namespaced_secret,
                             lambda: core.create_namespaced_secret(namespace, secret),
                             lambda: core.delete_namespaced_secret("test-secret", namespace), window=5.0)


@quotas.it("should create a ResourceQuota and capture the life of a configMap.", Conformance,
           twin="[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the life of a "
                "configMap. [Conformance]", images=["pause"])
def test_life_of_a_config_map(api: client.ApiClient, namespace: str, target: Target) -> None:
    core = pods.core(api)
    config_map = {"metadata": {"name": "test-configmap"}, "data": {"a": "b"}}
    life_of_a_counted_object(api, namespace, "configmaps", core.list_namespaced_config_map,
                             lambda: core.create_namespaced_config_map(namespace, config_map),
                             lambda: core.delete_namespaced_config_map("test-configmap", namespace), window=15.0)


@quotas.it("should create a ResourceQuota and capture the life of a pod.", Conformance,
           twin="[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the life of a pod. "
                "[Conformance]", images=["pause"], category="Core.Scheduling")
def test_life_of_a_pod(api: client.ApiClient, namespace: str, target: Target) -> None:
    usage = quota_with_count(api, namespace, quota_manifest("test-quota"), {})
    requests = {"cpu": "500m", "memory": "252Mi", "ephemeral-storage": "30Gi", EXTENDED_RESOURCE: "2"}
    created = pods.create(api, namespace, quota_pod(target, "test-pod", requests, {EXTENDED_RESOURCE: "2"}))
    used = {**usage, "pods": "1", "cpu": "500m", "memory": "252Mi", "ephemeral-storage": "30Gi",
            f"requests.{EXTENDED_RESOURCE}": "2"}
    wait_for_usage(api, namespace, "test-quota", used)

    check_rejected(lambda: pods.create(api, namespace, quota_pod(target, "fail-pod", {"cpu": "600m",
                                                                                      "memory": "100Mi"}, {})),
                   "a pod beyond the remaining cpu quota")
    extended = {"cpu": "500m", "memory": "100Mi", "ephemeral-storage": "30Gi", EXTENDED_RESOURCE: "2"}
    check_rejected(lambda: pods.create(api, namespace, quota_pod(target, "fail-pod-for-extended-resource",
                                                                 extended, {EXTENDED_RESOURCE: "2"})),
                   "a pod beyond the remaining extended resource quota")

    # A pod cannot change its resource requests, so the usage must not move either.
    created.spec.containers[0].resources.requests = {"cpu": "100m", "memory": "100Mi", "ephemeral-storage": "10Gi"}
    with pytest.raises(client.exceptions.ApiException):
        pods.core(api).replace_namespaced_pod("test-pod", namespace, created)
    wait_for_usage(api, namespace, "test-quota", used)

    pods.delete(api, namespace, "test-pod", grace_seconds=0)
    wait_for_usage(api, namespace, "test-quota", {**usage, "pods": "0", "cpu": "0", "memory": "0",
                                                  "ephemeral-storage": "0", f"requests.{EXTENDED_RESOURCE}": "0"})


def life_of_a_controller(api: client.ApiClient, namespace: str, resource: str, create: Callable[[], Any],
                         delete: Callable[[], Any]) -> None:
    usage = quota_with_count(api, namespace, quota_manifest("test-quota"), {resource: "0"})
    create()
    wait_for_usage(api, namespace, "test-quota", {resource: "1"})
    delete()
    wait_for_usage(api, namespace, "test-quota", {**usage, resource: "0"})


@quotas.it("should create a ResourceQuota and capture the life of a replication controller.", Conformance,
           twin="[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the life of a "
                "replication controller. [Conformance]", images=["nginx"])
def test_life_of_a_replication_controller(api: client.ApiClient, namespace: str, target: Target) -> None:
    core = pods.core(api)
    nginx = {"name": "test-rc", "image": target.image("nginx")}
    rc = target.place(workloads.replication_controller("test-rc", 0, {"name": "test-rc"}, [nginx]))
    del rc["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]  # newTestReplicationControllerForQuota
    rc["spec"]["selector"] = {"name": "test-rc"}
    life_of_a_controller(api, namespace, "replicationcontrollers",
                         lambda: core.create_namespaced_replication_controller(namespace, rc),
                         lambda: core.delete_namespaced_replication_controller("test-rc", namespace,
                                                                               propagation_policy="Background"))


@quotas.it("should create a ResourceQuota and capture the life of a replica set.", Conformance,
           twin="[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the life of a "
                "replica set. [Conformance]", images=["nginx"])
def test_life_of_a_replica_set(api: client.ApiClient, namespace: str, target: Target) -> None:
    apps = workloads.apps(api)
    nginx = {"name": "test-rs", "image": target.image("nginx")}
    rs = target.place(workloads.replica_set("test-rs", 0, {"name": "test-rs"}, [nginx]))
    del rs["metadata"]["labels"]  # newTestReplicaSetForQuota labels only the pods
    life_of_a_controller(api, namespace, "count/replicasets.apps",
                         lambda: apps.create_namespaced_replica_set(namespace, rs),
                         lambda: apps.delete_namespaced_replica_set("test-rs", namespace))


def check_scopes(api: client.ApiClient, namespace: str, target: Target, scope: str, other: str,
                 first: tuple[str, dict[str, str], dict[str, str], dict[str, Any]],
                 second: tuple[str, dict[str, str], dict[str, str], dict[str, Any]],
                 counted: Callable[[dict[str, str], dict[str, str], str], dict[str, str]]) -> None:
    """Two quotas with opposite scopes: each pod counts in exactly one of them, and is released on deletion.

    `first` is counted by the `other` scope and `second` by `scope`; `counted(requests, limits, n)` is the usage
    a quota shows with n such pods (and 0 for zero).
    """
    quota, other_quota = f"quota-{scope.lower()}", f"quota-{other.lower()}"
    for name, kind in ((quota, scope), (other_quota, other)):
        create_quota(api, namespace, scoped_quota(name, kind))
        wait_for_usage(api, namespace, name, {"pods": "0"})
    for (name, requests, limits, extra), counting, ignoring in ((first, other_quota, quota),
                                                                (second, quota, other_quota)):
        manifest = quota_pod(target, name, requests, limits)
        manifest["spec"].update(extra)
        pods.create(api, namespace, manifest)
        wait_for_usage(api, namespace, counting, counted(requests, limits, "1"))
        zero = counted(requests, limits, "0")
        wait_for_usage(api, namespace, ignoring, zero)
        ensure_usage(api, namespace, ignoring, zero)
        pods.delete(api, namespace, name, grace_seconds=0)
        wait_for_usage(api, namespace, counting, zero)


REQUESTS, LIMITS = {"cpu": "500m", "memory": "200Mi"}, {"cpu": "1", "memory": "400Mi"}


@quotas.it("should verify ResourceQuota with terminating scopes.", Conformance,
           twin="[sig-api-machinery] ResourceQuota should verify ResourceQuota with terminating scopes. "
                "[Conformance]", images=["pause"], category="Core.Scheduling")
def test_terminating_scopes(api: client.ApiClient, namespace: str, target: Target) -> None:
    def counted(requests: dict[str, str], limits: dict[str, str], n: str) -> dict[str, str]:
        if n == "0":
            return {"pods": "0", "requests.cpu": "0", "requests.memory": "0", "limits.cpu": "0", "limits.memory": "0"}
        return {"pods": n, "requests.cpu": requests["cpu"], "requests.memory": requests["memory"],
                "limits.cpu": limits["cpu"], "limits.memory": limits["memory"]}

    check_scopes(api, namespace, target, "Terminating", "NotTerminating",
                 ("test-pod", REQUESTS, LIMITS, {}),
                 ("terminating-pod", REQUESTS, LIMITS, {"activeDeadlineSeconds": 3600}), counted)


@quotas.it("should verify ResourceQuota with best effort scope.", Conformance,
           twin="[sig-api-machinery] ResourceQuota should verify ResourceQuota with best effort scope. "
                "[Conformance]", images=["pause"], category="Core.Scheduling")
def test_best_effort_scope(api: client.ApiClient, namespace: str, target: Target) -> None:
    check_scopes(api, namespace, target, "NotBestEffort", "BestEffort",
                 ("pfpod", {}, {}, {}), ("burstable-pod", REQUESTS, LIMITS, {}),
                 lambda requests, limits, n: {"pods": n})


@quotas.it("should be able to update and delete ResourceQuota.", Conformance,
           twin="[sig-api-machinery] ResourceQuota should be able to update and delete ResourceQuota. "
                "[Conformance]")
def test_update_and_delete(api: client.ApiClient, namespace: str) -> None:
    core = pods.core(api)
    quota: dict[str, Any] = {"metadata": {"name": "test-quota"}, "spec": {"hard": {"cpu": "1", "memory": "500Mi"}}}
    create_quota(api, namespace, quota)
    hard = core.read_namespaced_resource_quota("test-quota", namespace).spec.hard
    assert (parse_quantity(hard["cpu"]), parse_quantity(hard["memory"])) == (1, parse_quantity("500Mi")), hard

    quota["spec"]["hard"] = {"cpu": "2", "memory": "1Gi"}
    hard = core.replace_namespaced_resource_quota("test-quota", namespace, quota).spec.hard
    assert (parse_quantity(hard["cpu"]), parse_quantity(hard["memory"])) == (2, parse_quantity("1Gi")), hard
    hard = core.read_namespaced_resource_quota("test-quota", namespace).spec.hard
    assert (parse_quantity(hard["cpu"]), parse_quantity(hard["memory"])) == (2, parse_quantity("1Gi")), hard

    core.delete_namespaced_resource_quota("test-quota", namespace)
    with pytest.raises(client.exceptions.ApiException) as err:
        core.read_namespaced_resource_quota("test-quota", namespace)
    assert err.value.status == 404, f"expected `not found`, got {err.value.status}"


@quotas.it("should manage the lifecycle of a ResourceQuota", Conformance,
           twin="[sig-api-machinery] ResourceQuota should manage the lifecycle of a ResourceQuota [Conformance]")
def test_lifecycle(api: client.ApiClient, namespace: str) -> None:
    core, name = pods.core(api), f"e2e-quota-{uuid.uuid4().hex[:5]}"
    selector = f"e2e-rq-label={name}"
    create_quota(api, namespace, {"metadata": {"name": name, "labels": {"e2e-rq-label": name}},
                                  "spec": {"hard": {"cpu": "1", "memory": "500Mi"}}})
    got = core.read_namespaced_resource_quota(name, namespace)
    assert (parse_quantity(got.spec.hard["cpu"]), parse_quantity(got.spec.hard["memory"])) == \
        (1, parse_quantity("500Mi")), got.spec.hard
    assert int(got.metadata.resource_version) > 0, "the quota has no valid resource version"

    listed = retry.call(core.list_resource_quota_for_all_namespaces, label_selector=selector).items
    assert len(listed) == 1, f"failed to find resource quota {name}: {[q.metadata.name for q in listed]}"
    patched = core.patch_namespaced_resource_quota(
        name, namespace, {"metadata": {"labels": {name: "patched"}}, "spec": {"hard": {"memory": "750Mi"}}},
        _content_type=STRATEGIC_MERGE_PATCH)
    assert (patched.metadata.labels or {}).get(name) == "patched", f"labels: {patched.metadata.labels}"
    assert parse_quantity(patched.spec.hard["memory"]) == parse_quantity("750Mi"), patched.spec.hard
    assert int(patched.metadata.resource_version) > int(listed[0].metadata.resource_version), \
        "the patched object should have a larger resource version"

    core.delete_collection_namespaced_resource_quota(namespace, label_selector=selector)
    with pytest.raises(client.exceptions.ApiException) as err:
        core.read_namespaced_resource_quota(name, namespace)
    assert err.value.status == 404, f"expected `not found`, got {err.value.status}"
