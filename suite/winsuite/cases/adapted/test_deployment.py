"""Deployment (test/e2e/apps/deployment.go): rolling update, history clean-up, scale, reaping, status."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import Target
from winsuite.k8s import manifests
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import workloads
from winsuite.k8s.waits import wait_for_set
from winsuite.k8s.workloads import MERGE_PATCH
from winsuite.k8s.workloads import REVISION_ANNOTATION
from winsuite.k8s.workloads import STRATEGIC_MERGE_PATCH
from winsuite.k8s.workloads import EventStream

deployments = Describe(Area("sig-apps"), "Deployment")

AGNHOST_NAME = "agnhost"
POD_START_TIMEOUT = 180.0
GC_TIMEOUT = 120.0


def new_deployment(target: Target, name: str, replicas: int, labels: dict[str, str]) -> dict[str, Any]:
    """e2edeployment.NewDeployment (agnhost, RollingUpdate), placed on the target OS."""
    agnhost = manifests.container(AGNHOST_NAME, target.image("agnhost"), securityContext={})
    return target.place(workloads.deployment(name, replicas, labels, [agnhost]))


def new_rs(target: Target, name: str, labels: dict[str, str]) -> dict[str, Any]:
    """newRS of replica_set.go: one agnhost replica."""
    agnhost = manifests.container(AGNHOST_NAME, target.image("agnhost"))
    return target.place(workloads.replica_set(name, 1, labels, [agnhost]))


def create_deployment(api: client.ApiClient, namespace: str, manifest: dict[str, Any]) -> client.V1Deployment:
    return retry.call(workloads.apps(api).create_namespaced_deployment, namespace, manifest)


def create_and_complete(api: client.ApiClient, namespace: str, target: Target,
                        manifest: dict[str, Any]) -> client.V1Deployment:
    """Create a one-replica agnhost deployment; it reaches revision 1 with agnhost and completes."""
    name = manifest["metadata"]["name"]
    create_deployment(api, namespace, manifest)
    workloads.wait_for_deployment_revision_and_image(api, namespace, name, revision="1",
                                                     image=target.image("agnhost"))
    return workloads.wait_for_deployment_complete(api, namespace, name, timeout=POD_START_TIMEOUT)


@deployments.it("RollingUpdateDeployment should delete old pods and create new ones", Conformance,
                twin="[sig-apps] Deployment RollingUpdateDeployment should delete old pods and create new "
                     "ones [Conformance]",
                needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Concurrent")
def test_rolling_update(api: client.ApiClient, namespace: str, target: Target) -> None:
    rs = new_rs(target, "test-rolling-update-controller", {"name": "sample-pod", "pod": AGNHOST_NAME})
    rs["metadata"]["annotations"] = {REVISION_ANNOTATION: "3546343826724305832"}
    retry.call(workloads.apps(api).create_namespaced_replica_set, namespace, rs)
    workloads.wait_for_pods(api, namespace, {"name": "sample-pod"}, count=1, timeout=POD_START_TIMEOUT)

    name = "test-rolling-update-deployment"
    create_deployment(api, namespace, new_deployment(target, name, 1, {"name": "sample-pod"}))
    # The deployment adopts the replica set and takes the revision after the one it carries.
    workloads.wait_for_deployment_revision_and_image(api, namespace, name, revision="3546343826724305833",
                                                     image=target.image("agnhost"))
    deployment = workloads.wait_for_deployment_complete(api, namespace, name, timeout=POD_START_TIMEOUT)
    new = workloads.new_replica_set(api, deployment)
    old = [r for r in workloads.replica_sets_of(api, deployment)
           if new is None or r.metadata.uid != new.metadata.uid]
    assert len(old) == 1, f"want the one adopted old replica set, got {[r.metadata.name for r in old]}"


@deployments.it("deployment should delete old replica sets", Conformance,
                twin="[sig-apps] Deployment deployment should delete old replica sets [Conformance]",
                needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Concurrent")
def test_clean_up_policy(api: client.ApiClient, namespace: str, target: Target) -> None:
    rs = new_rs(target, "test-cleanup-controller", {"name": "cleanup-pod", "pod": AGNHOST_NAME})
    retry.call(workloads.apps(api).create_namespaced_replica_set, namespace, rs)
    workloads.wait_for_pods(api, namespace, {"name": "cleanup-pod"}, count=1, timeout=POD_START_TIMEOUT)

    name = "test-cleanup-deployment"
    core = pods.core(api)
    # Only the deployment's own pod may be created: the old replica set must not start a new one when the
    # controller adds the pod-template-hash label to its selector.
    version = workloads.listed_version(core.list_namespaced_pod, namespace=namespace)
    with EventStream(core.list_namespaced_pod, namespace=namespace, resource_version=version) as created_pods:
        manifest = new_deployment(target, name, 1, {"name": "cleanup-pod"})
        manifest["spec"]["revisionHistoryLimit"] = 0
        wanted = workloads.template_key(create_deployment(api, namespace, manifest).spec.template)
        # waitForDeploymentOldRSsNum(0): the adopted replica set is cleaned up, the new one alone is left.
        wait_for_set(workloads.apps(api).list_namespaced_replica_set, namespace=namespace,
                     label_selector="name=cleanup-pod", what=f"deployment {name} to have no old replica sets",
                     condition=lambda items: [workloads.template_key(r.spec.template) for r in items] == [wanted],
                     timeout=300.0, describe=lambda items: repr([r.metadata.name for r in items]))
        added = [pod for kind, pod in created_pods.drain() if kind == "ADDED"]
    assert len(added) <= 1, f"expected only one pod creation, got {[p.metadata.name for p in added]}"
    assert all(p.spec.containers[0].name == AGNHOST_NAME for p in added), \
        f"the created pod does not run {AGNHOST_NAME}: {[p.spec.containers[0].name for p in added]}"


@deployments.it("Deployment should have a working scale subresource", Conformance,
                twin="[sig-apps] Deployment Deployment should have a working scale subresource "
                     "[Conformance]",
                needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Concurrent")
def test_scale_subresource(api: client.ApiClient, namespace: str, target: Target) -> None:
    apps, name = workloads.apps(api), "test-new-deployment"
    create_and_complete(api, namespace, target, new_deployment(target, name, 1, {"name": AGNHOST_NAME}))
    workloads.check_scale_subresource(
        read=lambda: apps.read_namespaced_deployment_scale(name, namespace),
        replace=lambda scale: apps.replace_namespaced_deployment_scale(name, namespace, scale),
        patch=lambda body: apps.patch_namespaced_deployment_scale(name, namespace, body,
                                                                  _content_type=STRATEGIC_MERGE_PATCH),
        spec_replicas=lambda: apps.read_namespaced_deployment(name, namespace).spec.replicas)


@deployments.it("deployment reaping should cascade to its replica sets and pods",
                twin="[sig-apps] Deployment deployment reaping should cascade to its replica sets and pods",
                needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Concurrent")
def test_reaping_cascades(api: client.ApiClient, namespace: str, target: Target) -> None:
    apps, name, labels = workloads.apps(api), "test-new-deployment", {"name": AGNHOST_NAME}
    manifest = new_deployment(target, name, 1, labels)
    manifest["metadata"]["annotations"] = {
        "test": "should-copy-to-replica-set",
        "kubectl.kubernetes.io/last-applied-configuration": "should-not-copy-to-replica-set"}
    deployment = create_and_complete(api, namespace, target, manifest)
    assert workloads.new_replica_set(api, deployment) is not None, "the deployment has no new replica set"

    # stopDeployment: delete it and wait for the garbage collector to take its replica sets and pods.
    apps.delete_namespaced_deployment(name, namespace, propagation_policy="Background")
    workloads.wait_for_gone(apps.list_namespaced_deployment, name=name, namespace=namespace,
                            what=f"deployment {name}", timeout=GC_TIMEOUT)
    workloads.wait_for_object_set_gone(apps.list_namespaced_replica_set, namespace=namespace,
                                       labels=labels, what=f"the replica sets of deployment {name}",
                                       timeout=GC_TIMEOUT)
    pods.wait_for_no_pods(api, namespace, label_selector=workloads.selector(labels),
                          what=f"the pods of deployment {name} to be gone", timeout=GC_TIMEOUT)


@deployments.it("should validate Deployment Status endpoints", Conformance,
                twin="[sig-apps] Deployment should validate Deployment Status endpoints [Conformance]",
                needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Concurrent")
def test_status_endpoints(api: client.ApiClient, namespace: str, target: Target) -> None:
    apps, name = workloads.apps(api), f"test-deployment-{namespace[-5:]}"
    version = workloads.listed_version(apps.list_deployment_for_all_namespaces, label_selector="e2e=testing")
    create_and_complete(api, namespace, target,
                        new_deployment(target, name, 1, {"name": AGNHOST_NAME, "e2e": "testing"}))
    workloads.check_status_subresource(
        read_status=lambda: apps.read_namespaced_deployment_status(name, namespace),
        read=lambda: apps.read_namespaced_deployment(name, namespace),
        replace_status=lambda obj: apps.replace_namespaced_deployment_status(name, namespace, obj),
        patch_status=lambda body: apps.patch_namespaced_deployment_status(name, namespace, body,
                                                                          _content_type=MERGE_PATCH),
        events=lambda: EventStream(apps.list_namespaced_deployment, namespace=namespace,
                                   label_selector="e2e=testing", resource_version=version),
        condition_type=client.V1DeploymentCondition)
