"""ReplicaSet (test/e2e/apps/replica_set.go): serving replicas, adoption, scale, patch, status, quota."""

from __future__ import annotations

import uuid
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
from winsuite.k8s import workloads
from winsuite.k8s.workloads import STRATEGIC_MERGE_PATCH
from winsuite.k8s.workloads import EventStream

replica_sets = Describe(Area("sig-apps"), "ReplicaSet")

AGNHOST_NAME = "agnhost"  # AgnhostImageName of apps/types.go
SAMPLE_LABELS = {"name": "sample-pod", "pod": AGNHOST_NAME}
CONTROLLER_TIMEOUT = 60.0  # the minute upstream polls the controller's conditions for
POD_START_TIMEOUT = 180.0


def new_rs(target: Target, name: str, replicas: int, labels: dict[str, str],
           container_name: str = AGNHOST_NAME, *args: str) -> dict[str, Any]:
    """newRS of replica_set.go (agnhost), placed on the target OS."""
    container = manifests.container(container_name, target.image("agnhost"), args=list(args) or None)
    return target.place(workloads.replica_set(name, replicas, labels, [container]))


def create(api: client.ApiClient, namespace: str, manifest: dict[str, Any]) -> client.V1ReplicaSet:
    return retry.call(workloads.apps(api).create_namespaced_replica_set, namespace, manifest)


@replica_sets.it("should serve a basic image on each replica with a public image", Conformance,
                 twin="[sig-apps] ReplicaSet should serve a basic image on each replica with a public image "
                      "[Conformance]",
                 needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Concurrent")
def test_serve_basic_image(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = f"my-hostname-basic-{uuid.uuid4()}"
    labels = {"name": name}
    manifest = new_rs(target, name, 1, labels, name, "serve-hostname")
    manifest["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 9376}]
    create(api, namespace, manifest)
    connectivity.wait_for_replicas_serving(api, namespace, labels, count=1, state="Running")


def wait_for_replica_failure(api: client.ApiClient, namespace: str, name: str, *, generation: int,
                             present: bool) -> None:
    workloads.wait_for_replica_failure(workloads.apps(api).list_namespaced_replica_set, name=name,
                                       namespace=namespace, generation=generation, present=present,
                                       timeout=CONTROLLER_TIMEOUT)


@replica_sets.it("should surface a failure condition on a common issue like exceeded quota",
                 twin="[sig-apps] ReplicaSet should surface a failure condition on a common issue like "
                      "exceeded quota",
                 images=["agnhost"], category="Core.Scheduling")
def test_failure_condition_on_exceeded_quota(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "condition-test"
    workloads.create_pod_quota(api, namespace, name, pods_allowed=2, timeout=CONTROLLER_TIMEOUT)
    # The replicas are admitted or refused by quota; none needs to run, so any node of the OS will do.
    rs = create(api, namespace, new_rs(target.scheduling_only(), name, 3, {"name": name}))
    wait_for_replica_failure(api, namespace, name, generation=rs.metadata.generation, present=True)

    def scale_to_two(update: Any) -> None:
        update.spec.replicas = 2

    apps = workloads.apps(api)
    rs = workloads.update_with_retries(lambda: apps.read_namespaced_replica_set(name, namespace),
                                       lambda obj: apps.replace_namespaced_replica_set(name, namespace, obj),
                                       scale_to_two)
    wait_for_replica_failure(api, namespace, name, generation=rs.metadata.generation, present=False)


@replica_sets.it("should adopt matching pods on creation and release no longer matching pods", Conformance,
                 twin="[sig-apps] ReplicaSet should adopt matching pods on creation and release no longer "
                      "matching pods [Conformance]",
                 needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Concurrent")
def test_adopt_and_release(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "pod-adoption-release"
    labels = {"name": name}
    orphan = manifests.pod(name, [manifests.container(name, target.image("agnhost"))], labels=labels)
    pods.start(api, namespace, target.place(orphan))
    rs = create(api, namespace, new_rs(target, name, 1, labels, name))
    workloads.adopted_or_deleted(api, namespace, name, owner_uid=rs.metadata.uid, timeout=CONTROLLER_TIMEOUT)
    replica = workloads.wait_for_pods(api, namespace, labels, count=1, state="", timeout=120)[0]
    workloads.relabel_and_wait_released(api, namespace, replica.metadata.name, owner_uid=rs.metadata.uid,
                                        labels={"name": "not-matching-name"}, timeout=CONTROLLER_TIMEOUT)


@replica_sets.it("Replicaset should have a working scale subresource", Conformance,
                 twin="[sig-apps] ReplicaSet Replicaset should have a working scale subresource "
                      "[Conformance]",
                 needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Concurrent")
def test_scale_subresource(api: client.ApiClient, namespace: str, target: Target) -> None:
    apps = workloads.apps(api)
    create(api, namespace, new_rs(target, "test-rs", 1, SAMPLE_LABELS))
    workloads.wait_for_object(apps.list_namespaced_replica_set, name="test-rs", namespace=namespace,
                              what="replica set test-rs to have 1 available replica",
                              condition=lambda rs: rs.status.available_replicas == 1,
                              timeout=POD_START_TIMEOUT)
    workloads.check_scale_subresource(
        read=lambda: apps.read_namespaced_replica_set_scale("test-rs", namespace),
        replace=lambda scale: apps.replace_namespaced_replica_set_scale("test-rs", namespace, scale),
        patch=lambda body: apps.patch_namespaced_replica_set_scale("test-rs", namespace, body,
                                                                   _content_type=STRATEGIC_MERGE_PATCH),
        spec_replicas=lambda: apps.read_namespaced_replica_set("test-rs", namespace).spec.replicas)


@replica_sets.it("Replace and Patch tests", Conformance,
                 twin="[sig-apps] ReplicaSet Replace and Patch tests [Conformance]",
                 needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Concurrent")
def test_replace_and_patch(api: client.ApiClient, namespace: str, target: Target) -> None:
    apps = workloads.apps(api)
    version = workloads.listed_version(apps.list_replica_set_for_all_namespaces,
                                       label_selector="test-rs=patched")
    created = create(api, namespace, new_rs(target, "test-rs", 1, SAMPLE_LABELS))
    workloads.wait_for_pods(api, namespace, {"name": "sample-pod"}, count=1, timeout=POD_START_TIMEOUT)

    def scale_to_two(update: Any) -> None:
        update.spec.replicas = 2

    workloads.update_with_retries(lambda: apps.read_namespaced_replica_set("test-rs", namespace),
                                  lambda obj: apps.replace_namespaced_replica_set("test-rs", namespace, obj),
                                  scale_to_two)
    pause = target.image("pause")
    pod_spec = {"terminationGracePeriodSeconds": 0, "containers": [{"name": "test-rs", "image": pause}]}
    patch = {"metadata": {"labels": {"test-rs": "patched"}},
             "spec": {"replicas": 3, "template": {"spec": pod_spec}}}
    patched = apps.patch_namespaced_replica_set("test-rs", namespace, patch,
                                                _content_type=STRATEGIC_MERGE_PATCH)
    assert int(patched.metadata.resource_version) > int(created.metadata.resource_version), \
        "the patched object should have a larger resource version"
    with EventStream(apps.list_replica_set_for_all_namespaces, label_selector="test-rs=patched",
                     resource_version=version) as events:
        events.until("replica set test-rs patched with 3 ready and available pause replicas",
                     lambda _, rs: rs.metadata.name == "test-rs"
                     and (rs.metadata.labels or {}).get("test-rs") == "patched"
                     and rs.status.ready_replicas == 3 and rs.status.available_replicas == 3
                     and rs.spec.template.spec.containers[0].image == pause
                     and rs.spec.template.spec.termination_grace_period_seconds == 0,
                     timeout=POD_START_TIMEOUT)


@replica_sets.it("should list and delete a collection of ReplicaSets", Conformance,
                 twin="[sig-apps] ReplicaSet should list and delete a collection of ReplicaSets "
                      "[Conformance]",
                 needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Concurrent")
def test_list_and_delete_collection(api: client.ApiClient, namespace: str, target: Target) -> None:
    apps = workloads.apps(api)
    e2e = uuid.uuid4().hex[:5]
    create(api, namespace, new_rs(target, "test-rs", 3, {**SAMPLE_LABELS, "e2e": e2e}))
    workloads.wait_for_pods(api, namespace, {"name": "sample-pod"}, count=3, timeout=POD_START_TIMEOUT)
    listed = retry.call(apps.list_replica_set_for_all_namespaces, label_selector=f"e2e={e2e}").items
    assert len(listed) == 1, f"filtered list wasn't found: {[rs.metadata.name for rs in listed]}"
    apps.delete_collection_namespaced_replica_set(namespace, label_selector=f"e2e={e2e}",
                                                  grace_period_seconds=1)
    listed = retry.call(apps.list_replica_set_for_all_namespaces, label_selector=f"e2e={e2e}").items
    assert not listed, f"filtered list should have no replicas: {[rs.metadata.name for rs in listed]}"


@replica_sets.it("should validate Replicaset Status endpoints", Conformance,
                 twin="[sig-apps] ReplicaSet should validate Replicaset Status endpoints [Conformance]",
                 needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Concurrent")
def test_status_endpoints(api: client.ApiClient, namespace: str, target: Target) -> None:
    apps = workloads.apps(api)
    selector = workloads.selector(SAMPLE_LABELS)
    version = workloads.listed_version(apps.list_replica_set_for_all_namespaces, label_selector=selector)
    create(api, namespace, new_rs(target, "test-rs", 1, SAMPLE_LABELS))
    workloads.wait_for_pods(api, namespace, {"name": "sample-pod"}, count=1, timeout=POD_START_TIMEOUT)
    workloads.check_status_subresource(
        read_status=lambda: apps.read_namespaced_replica_set_status("test-rs", namespace),
        read=lambda: apps.read_namespaced_replica_set("test-rs", namespace),
        replace_status=lambda obj: apps.replace_namespaced_replica_set_status("test-rs", namespace, obj),
        patch_status=lambda body: apps.patch_namespaced_replica_set_status("test-rs", namespace, body,
                                                                           _content_type=workloads.MERGE_PATCH),
        events=lambda: EventStream(apps.list_namespaced_replica_set, namespace=namespace,
                                   label_selector=selector, resource_version=version),
        condition_type=client.V1ReplicaSetCondition)
