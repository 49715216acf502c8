"""ReplicationController (test/e2e/apps/rc.go): serving replicas, quota, adoption, lifecycle, scale."""

from __future__ import annotations

import collections
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

rcs = Describe(Area("sig-apps"), "ReplicationController")

AGNHOST_NAME = "agnhost"
CONTROLLER_TIMEOUT = 60.0
POD_START_TIMEOUT = 180.0  # f.Timeouts.PodStart is 5m; the suite's per-test budget is shorter
STATIC = {"test-rc-static": "true"}


def new_rc(target: Target, name: str, replicas: int, labels: dict[str, str], *args: str,
           container_name: str = AGNHOST_NAME, image_id: str = "agnhost") -> dict[str, Any]:
    """newRC of rc.go, placed on the target OS."""
    container = manifests.container(container_name, target.image(image_id), args=list(args) or None)
    return target.place(workloads.replication_controller(name, replicas, labels, [container]))


def create(api: client.ApiClient, namespace: str, manifest: dict[str, Any]) -> client.V1ReplicationController:
    return retry.call(pods.core(api).create_namespaced_replication_controller, namespace, manifest)


def set_replicas(api: client.ApiClient, namespace: str, name: str, replicas: int) -> Any:
    """updateReplicationControllerWithRetries setting spec.replicas."""
    core = pods.core(api)

    def scale(rc: Any) -> None:
        rc.spec.replicas = replicas

    return workloads.update_with_retries(
        lambda: core.read_namespaced_replication_controller(name, namespace),
        lambda rc: core.replace_namespaced_replication_controller(name, namespace, rc), scale)


@rcs.it("should serve a basic image on each replica with a public image", Conformance,
        twin="[sig-apps] ReplicationController should serve a basic image on each replica with a public "
             "image [Conformance]",
        needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Concurrent")
def test_serve_basic_image(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = f"my-hostname-basic-{uuid.uuid4()}"
    labels = {"name": name}
    manifest = new_rc(target, name, 1, labels, "serve-hostname", container_name=name)
    manifest["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 9376}]
    create(api, namespace, manifest)
    connectivity.wait_for_replicas_serving(api, namespace, labels, count=1, state="Ready")


def wait_for_replica_failure(api: client.ApiClient, namespace: str, name: str, *, generation: int,
                             present: bool) -> None:
    workloads.wait_for_replica_failure(pods.core(api).list_namespaced_replication_controller, name=name,
                                       namespace=namespace, generation=generation, present=present,
                                       timeout=CONTROLLER_TIMEOUT)


@rcs.it("should surface a failure condition on a common issue like exceeded quota", Conformance,
        twin="[sig-apps] ReplicationController should surface a failure condition on a common issue like "
             "exceeded quota [Conformance]",
        images=["agnhost"], category="Core.Scheduling")
def test_failure_condition_on_exceeded_quota(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "condition-test"
    workloads.create_pod_quota(api, namespace, name, pods_allowed=2, timeout=CONTROLLER_TIMEOUT)
    # Quota admits or refuses the replicas; none needs to run, so any node of the OS will do.
    rc = create(api, namespace, new_rc(target.scheduling_only(), name, 3, {"name": name}))
    wait_for_replica_failure(api, namespace, name, generation=rc.metadata.generation, present=True)
    rc = set_replicas(api, namespace, name, 2)
    wait_for_replica_failure(api, namespace, name, generation=rc.metadata.generation, present=False)


@rcs.it("should adopt matching pods on creation", Conformance,
        twin="[sig-apps] ReplicationController should adopt matching pods on creation [Conformance]",
        needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Concurrent")
def test_adopt_matching_orphans(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "pod-adoption"
    labels = {"name": name}
    orphan = manifests.pod(name, [manifests.container(name, target.image("agnhost"))], labels=labels)
    pods.start(api, namespace, target.place(orphan))
    manifest = new_rc(target, name, 1, labels, container_name=name)
    manifest["spec"]["selector"] = labels
    rc = create(api, namespace, manifest)
    workloads.adopted_or_deleted(api, namespace, name, owner_uid=rc.metadata.uid, timeout=CONTROLLER_TIMEOUT)


@rcs.it("should release no longer matching pods", Conformance,
        twin="[sig-apps] ReplicationController should release no longer matching pods [Conformance]",
        needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Concurrent")
def test_release_no_longer_matching(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "pod-release"
    labels = {"name": name}
    manifest = new_rc(target, name, 1, labels, container_name=name)
    manifest["spec"]["selector"] = labels
    rc = create(api, namespace, manifest)
    replica = workloads.wait_for_pods(api, namespace, labels, count=1, state="", timeout=120)[0]
    workloads.relabel_and_wait_released(api, namespace, replica.metadata.name, owner_uid=rc.metadata.uid,
                                        labels={"name": "not-matching-name"}, timeout=CONTROLLER_TIMEOUT)


class LifecycleWatch:
    """The scenario half of WatchEventSequenceVerifier: one watch, each expected event waited for in turn."""

    def __init__(self, stream: EventStream, name: str) -> None:
        self.stream, self.name = stream, name
        self.recorded: list[str] = []

    def event(self, kind: str, timeout: float = 60.0) -> None:
        found = self.stream.until(f"a {kind} event for rc {self.name}", lambda k, _: k == kind,
                                  timeout=timeout)
        self.recorded.append(found[0])

    def replicas(self, count: int, *, ready: bool, timeout: float = POD_START_TIMEOUT) -> None:
        self.stream.until(f"rc {self.name} with {count} replicas", lambda _, rc: rc.metadata.name == self.name
                          and rc.status.replicas == count
                          and (not ready or rc.status.ready_replicas == count), timeout=timeout)


@rcs.it("should test the lifecycle of a ReplicationController", Conformance,
        twin="[sig-apps] ReplicationController should test the lifecycle of a ReplicationController "
             "[Conformance]",
        needs=[Capability.RUNS_CONTAINERS], images=["nginx"], category="Core.Concurrent")
def test_lifecycle(api: client.ApiClient, namespace: str, target: Target) -> None:
    core, name, selector = pods.core(api), "rc-test", workloads.selector(STATIC)
    manifest = new_rc(target, name, 1, STATIC, container_name=name, image_id="nginx")
    manifest["metadata"]["labels"] = STATIC
    manifest["spec"]["selector"] = STATIC
    manifest["spec"]["template"]["metadata"]["name"] = name
    del manifest["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    version = workloads.listed_version(core.list_namespaced_replication_controller, namespace=namespace,
                                       label_selector=selector)
    with EventStream(core.list_namespaced_replication_controller, namespace=namespace,
                     label_selector=selector, resource_version=version) as stream:
        watched = LifecycleWatch(stream, name)
        created = create(api, namespace, manifest)
        watched.event("ADDED")
        watched.replicas(1, ready=True)

        patched = core.patch_namespaced_replication_controller(
            name, namespace, {"metadata": {"labels": {"test-rc": "patched"}}},
            _content_type=STRATEGIC_MERGE_PATCH)
        assert (patched.metadata.labels or {}).get("test-rc") == "patched", "failed to patch RC"
        assert int(patched.metadata.resource_version) > int(created.metadata.resource_version), \
            "the patched object should have a larger resource version"
        watched.event("MODIFIED")

        status = core.patch_namespaced_replication_controller_status(
            name, namespace, {"status": {"readyReplicas": 0, "availableReplicas": 0}},
            _content_type=STRATEGIC_MERGE_PATCH)
        assert not status.status.ready_replicas, "the status patch did not set readyReplicas to 0"
        watched.event("MODIFIED")
        watched.replicas(1, ready=False)
        assert core.read_namespaced_replication_controller_status(name, namespace).status.replicas == 1, \
            "the status replica count does not match the initial count"

        core.patch_namespaced_replication_controller_scale(name, namespace, {"spec": {"replicas": 2}},
                                                           _content_type=STRATEGIC_MERGE_PATCH)
        watched.event("MODIFIED", timeout=POD_START_TIMEOUT)
        watched.replicas(2, ready=True)

        rc = core.read_namespaced_replication_controller(name, namespace)
        assert (rc.metadata.labels or {}).get("test-rc") == "patched", "the RC lost the label of the patch"
        rc.status.available_replicas = rc.status.ready_replicas = 1
        core.replace_namespaced_replication_controller_status(name, namespace, rc)
        watched.event("MODIFIED")

        listed = retry.call(core.list_replication_controller_for_all_namespaces,
                            label_selector=selector).items
        assert any(item.metadata.name == name and item.metadata.namespace == namespace
                   and (item.metadata.labels or {}).get("test-rc") == "patched" for item in listed), \
            f"the listed ReplicationControllers lack the expected values: {[i.metadata for i in listed]}"

        core.delete_collection_namespaced_replication_controller(namespace, label_selector=selector)
        watched.event("DELETED")
    expected = collections.Counter(["ADDED", "MODIFIED", "MODIFIED", "MODIFIED", "MODIFIED", "DELETED"])
    assert not expected - collections.Counter(watched.recorded), f"watch events seen: {watched.recorded}"


@rcs.it("should get and update a ReplicationController scale", Conformance,
        twin="[sig-apps] ReplicationController should get and update a ReplicationController scale "
             "[Conformance]",
        needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Concurrent")
def test_get_and_update_scale(api: client.ApiClient, namespace: str, target: Target) -> None:
    core, name = pods.core(api), f"e2e-rc-{uuid.uuid4().hex[:5]}"
    create(api, namespace, new_rc(target, name, 1, {"name": name}))

    def wait_for_status_replicas(count: int) -> None:
        workloads.wait_for_object(core.list_namespaced_replication_controller, name=name, namespace=namespace,
                                  what=f"rc {name} to report {count} replica(s)",
                                  condition=lambda rc: rc.status.replicas == count,
                                  timeout=CONTROLLER_TIMEOUT)

    wait_for_status_replicas(1)
    scale = core.read_namespaced_replication_controller_scale(name, namespace)
    assert scale.status.replicas == 1, f"failed to get the current replica count: {scale.status}"
    scale.metadata.resource_version = ""  # an unconditional update
    scale.spec.replicas = 2
    core.replace_namespaced_replication_controller_scale(name, namespace, scale)
    wait_for_status_replicas(2)
