"""Daemon set (test/e2e/apps/daemon_set.go): one pod per eligible node of the target OS, node selection, revival.

A DaemonSet's pods are placed with target.place like any pod, so the nodes it must cover are the nodes of the
target OS whose taints it tolerates: on the embedded cluster, the real node(s) and never a simulated one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Serial
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import nodes
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import workloads
from winsuite.k8s.waits import wait_for_set
from winsuite.k8s.workloads import MERGE_PATCH
from winsuite.k8s.workloads import STRATEGIC_MERGE_PATCH
from winsuite.k8s.workloads import EventStream

daemon_sets = Describe(Area("sig-apps"), "Daemon set", Serial)

DS_NAME = "daemon-set"
LABEL_PREFIX = "daemonset-"
NAME_LABEL = {f"{LABEL_PREFIX}name": DS_NAME}
COLOR_LABEL = f"{LABEL_PREFIX}color"
TIMEOUT = 240.0  # dsRetryTimeout is 5m; the suite's per-test budget is shorter
# Taints the DaemonSet controller tolerates on every daemon pod (pkg/controller/daemon/util).
AUTO_TOLERATED = frozenset({
    "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/memory-pressure", "node.kubernetes.io/pid-pressure", "node.kubernetes.io/unschedulable",
})


def complex_daemon_set(target: Target) -> dict[str, Any]:
    """The daemon set placed only on nodes labelled blue, besides the target OS's selector."""
    manifest = new_daemon_set(target)
    manifest["spec"]["template"]["spec"]["nodeSelector"][COLOR_LABEL] = "blue"
    return manifest


def new_daemon_set(target: Target, *, with_labels: bool = False) -> dict[str, Any]:
    """newDaemonSet / newDaemonSetWithLabel (e2edaemonset.NewDaemonSet), placed on the target OS."""
    app = {"name": "app", "image": target.image("agnhost"), "ports": [{"containerPort": 9376}],
           "securityContext": {}}
    metadata: dict[str, Any] = {"name": DS_NAME, "labels": NAME_LABEL} if with_labels else {"name": DS_NAME}
    return target.place({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": metadata,
        "spec": {"selector": {"matchLabels": NAME_LABEL},
                 "template": {"metadata": {"labels": NAME_LABEL},
                              "spec": {"containers": [app], "securityContext": {}}}}})


def tolerated(taint: Any, tolerations: list[dict[str, str]]) -> bool:
    if taint.effect not in ("NoSchedule", "NoExecute") or taint.key in AUTO_TOLERATED:
        return True
    return any(t.get("key") in (None, "", taint.key) and t.get("effect") in (None, "", taint.effect)
               and (t.get("operator") == "Exists" or t.get("value", "") == (taint.value or ""))
               for t in tolerations)


def named(name: str, spec: dict[str, Any]) -> bool:
    """The template's required node affinity admits a node by its name: the placement keeps simulated nodes out by
    name (matchFields), which the DaemonSet controller honours like any other."""
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = required.get("nodeSelectorTerms") or [{}]
    return any(all((name in f["values"]) == (f["operator"] == "In") for f in term.get("matchFields", [])
                   if f["key"] == "metadata.name") for term in terms)


def eligible_nodes(api: client.ApiClient, ds: dict[str, Any]) -> list[str]:
    """e2edaemonset.SchedulableNodes: nodes whose labels match the pod template, whose taints it tolerates and whose
    names its node affinity admits."""
    spec = ds["spec"]["template"]["spec"]
    selector, tolerations = spec.get("nodeSelector", {}), spec.get("tolerations", [])
    return sorted(n.metadata.name for n in nodes.list_nodes(api)
                  if all((n.metadata.labels or {}).get(k) == v for k, v in selector.items())
                  and all(tolerated(t, tolerations) for t in n.spec.taints or []) and named(n.metadata.name, spec))


def wait_for_daemon_pods(api: client.ApiClient, namespace: str, ds_uid: str, node_names: list[str],
                         what: str) -> None:
    """CheckDaemonPodOnNodes: exactly one available daemon pod on each of `node_names`, none elsewhere."""

    def per_node(items: list[Any]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for pod in items:
            if workloads.controlled_by(pod, ds_uid) and pod.metadata.deletion_timestamp is None \
                    and pods.CONDITIONS["Ready"](pod):
                counts[pod.spec.node_name] = counts.get(pod.spec.node_name, 0) + 1
        return counts

    wait_for_set(pods.core(api).list_namespaced_pod, namespace=namespace,
                 label_selector=workloads.selector(NAME_LABEL), what=what,
                 condition=lambda items: per_node(items) == dict.fromkeys(node_names, 1), timeout=TIMEOUT,
                 describe=lambda items: f"available daemon pods per node: {per_node(items)}")


class DaemonSetTest:
    """The Describe's BeforeEach/AfterEach and shared steps for one test namespace."""

    def __init__(self, api: client.ApiClient, namespace: str, target: Target) -> None:
        self.api, self.namespace, self.target = api, namespace, target
        self.apps = workloads.apps(api)
        # patchNamespaceAnnotations: no namespace-wide node selector may narrow the daemon's nodes.
        pods.core(api).patch_namespace(namespace, {"metadata": {"annotations": {
            "scheduler.alpha.kubernetes.io/node-selector": ""}}}, _content_type=STRATEGIC_MERGE_PATCH)

    def create(self, manifest: dict[str, Any]) -> client.V1DaemonSet:
        return retry.call(self.apps.create_namespaced_daemon_set, self.namespace, manifest)

    def run(self, manifest: dict[str, Any]) -> client.V1DaemonSet:
        """Create the daemon set; its pods come up on every eligible node and its status says so."""
        ds = self.create(manifest)
        self.wait_running_on_all_nodes(ds, manifest)
        self.wait_status()
        return ds

    def wait_running_on_all_nodes(self, ds: client.V1DaemonSet, manifest: dict[str, Any]) -> list[str]:
        """checkRunningOnAllNodes; an empty node list would make the check vacuous, so it fails instead."""
        names = eligible_nodes(self.api, manifest)
        assert names, f"no node of the target OS can run the daemon pods: {manifest['spec']['template']['spec']}"
        wait_for_daemon_pods(self.api, self.namespace, ds.metadata.uid, names,
                             f"daemon pods of {DS_NAME} to run on every eligible node {names}")
        return names

    def wait_status(self) -> None:
        """e2edaemonset.CheckDaemonStatus: desired, currently scheduled and ready counts agree."""
        workloads.wait_for_object(
            self.apps.list_namespaced_daemon_set, name=DS_NAME, namespace=self.namespace,
            what=f"daemon set {DS_NAME} to have all desired pods scheduled and ready",
            condition=lambda ds: ds.status.desired_number_scheduled == ds.status.current_number_scheduled
            == ds.status.number_ready, timeout=TIMEOUT)

    def daemon_pods(self) -> list[client.V1Pod]:
        """listDaemonPods: the daemon's pods that have not terminated."""
        listed = retry.call(pods.core(self.api).list_namespaced_pod, self.namespace,
                            label_selector=workloads.selector(NAME_LABEL),
                            field_selector="status.phase!=Failed,status.phase!=Succeeded").items
        assert listed, f"daemon set {DS_NAME} has no pods"
        return list(listed)


def set_daemon_labels(api: client.ApiClient, node_name: str, labels: dict[str, str]) -> client.V1Node:
    """setDaemonSetNodeLabels: the node's daemonset-* labels become exactly `labels`."""
    core = pods.core(api)

    def relabel(node: Any) -> None:
        kept = {k: v for k, v in (node.metadata.labels or {}).items() if not k.startswith(LABEL_PREFIX)}
        node.metadata.labels = {**kept, **labels}

    return workloads.update_with_retries(lambda: core.read_node(node_name),
                                         lambda node: core.replace_node(node_name, node), relabel)


@contextmanager
def labelled_node(api: client.ApiClient, target: Target) -> Iterator[str]:
    """A ready node of the target OS that runs containers; its daemonset-* labels are cleared afterwards."""
    name = next(n.name for n in target.facts.nodes if n.os == target.os and n.runs_containers)
    set_daemon_labels(api, name, {})
    try:
        yield name
    finally:
        set_daemon_labels(api, name, {})


@daemon_sets.it("should run and stop simple daemon", Conformance,
                twin="[sig-apps] Daemon set [Serial] should run and stop simple daemon [Conformance]",
                needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Scheduling")
def test_simple_daemon(api: client.ApiClient, namespace: str, target: Target) -> None:
    test = DaemonSetTest(api, namespace, target)
    manifest = new_daemon_set(target)
    ds = test.run(manifest)

    victim = test.daemon_pods()[0]
    pods.delete(api, namespace, victim.metadata.name)
    test.wait_running_on_all_nodes(ds, manifest)


@windows_pods(lambda target: [complex_daemon_set(target)], upstream="test/e2e/apps/daemon_set.go:207-252")
@daemon_sets.it("should run and stop complex daemon", Conformance,
                twin="[sig-apps] Daemon set [Serial] should run and stop complex daemon [Conformance]",
                needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Scheduling")
def test_complex_daemon(api: client.ApiClient, namespace: str, target: Target) -> None:
    test = DaemonSetTest(api, namespace, target)
    ds = test.create(complex_daemon_set(target))
    wait_for_daemon_pods(api, namespace, ds.metadata.uid, [], "no daemon pods while no node is blue")

    with labelled_node(api, target) as node_name:
        node = set_daemon_labels(api, node_name, {COLOR_LABEL: "blue"})
        daemon_labels = {k for k in node.metadata.labels if k.startswith(LABEL_PREFIX)}
        assert daemon_labels == {COLOR_LABEL}, f"the node's daemon set labels are {daemon_labels}"
        wait_for_daemon_pods(api, namespace, ds.metadata.uid, [node_name], f"a daemon pod on blue node {node_name}")
        test.wait_status()

        set_daemon_labels(api, node_name, {COLOR_LABEL: "green"})
        wait_for_daemon_pods(api, namespace, ds.metadata.uid, [], "no daemon pods once the node is green")

        patch = {"spec": {"template": {"spec": {"nodeSelector": {COLOR_LABEL: "green"}}},
                          "updateStrategy": {"type": "RollingUpdate"}}}
        ds = test.apps.patch_namespaced_daemon_set(DS_NAME, namespace, patch, _content_type=STRATEGIC_MERGE_PATCH)
        wait_for_daemon_pods(api, namespace, ds.metadata.uid, [node_name], f"a daemon pod on green node {node_name}")
        test.wait_status()


@daemon_sets.it("should retry creating failed daemon pods", Conformance,
                twin="[sig-apps] Daemon set [Serial] should retry creating failed daemon pods [Conformance]",
                needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Scheduling")
def test_retry_failed_daemon_pods(api: client.ApiClient, namespace: str, target: Target) -> None:
    test = DaemonSetTest(api, namespace, target)
    manifest = new_daemon_set(target)
    ds = test.run(manifest)

    failed = test.daemon_pods()[0]
    failed.metadata.resource_version = None
    failed.status.phase = "Failed"
    pods.core(api).replace_namespaced_pod_status(failed.metadata.name, namespace, failed)
    test.wait_running_on_all_nodes(ds, manifest)
    workloads.wait_for_gone(pods.core(api).list_namespaced_pod, name=failed.metadata.name, namespace=namespace,
                            what=f"failed daemon pod {failed.metadata.name}", timeout=TIMEOUT)


@daemon_sets.it("should list and delete a collection of DaemonSets", Conformance,
                twin="[sig-apps] Daemon set [Serial] should list and delete a collection of DaemonSets [Conformance]",
                needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Scheduling")
def test_list_and_delete_collection(api: client.ApiClient, namespace: str, target: Target) -> None:
    test = DaemonSetTest(api, namespace, target)
    manifest = new_daemon_set(target, with_labels=True)
    test.run(manifest)

    selector = workloads.selector(NAME_LABEL)
    listed = retry.call(test.apps.list_daemon_set_for_all_namespaces, label_selector=selector).items
    assert len(listed) == 1, f"filtered list wasn't found: {[d.metadata.name for d in listed]}"
    test.apps.delete_collection_namespaced_daemon_set(namespace, label_selector=selector, grace_period_seconds=1)
    listed = retry.call(test.apps.list_daemon_set_for_all_namespaces, label_selector=selector).items
    assert not listed, f"filtered list should have no daemon set: {[d.metadata.name for d in listed]}"


@daemon_sets.it("should verify changes to a daemon set status", Conformance,
                twin="[sig-apps] Daemon set [Serial] should verify changes to a daemon set status [Conformance]",
                needs=[Capability.RUNS_CONTAINERS], images=["agnhost"], category="Core.Scheduling")
def test_status_changes(api: client.ApiClient, namespace: str, target: Target) -> None:
    test = DaemonSetTest(api, namespace, target)
    selector = workloads.selector(NAME_LABEL)
    version = workloads.listed_version(test.apps.list_daemon_set_for_all_namespaces, label_selector=selector)
    manifest = new_daemon_set(target, with_labels=True)
    test.run(manifest)
    apps = test.apps
    workloads.check_status_subresource(
        read_status=lambda: apps.read_namespaced_daemon_set_status(DS_NAME, namespace),
        read=lambda: apps.read_namespaced_daemon_set(DS_NAME, namespace),
        replace_status=lambda obj: apps.replace_namespaced_daemon_set_status(DS_NAME, namespace, obj),
        patch_status=lambda body: apps.patch_namespaced_daemon_set_status(DS_NAME, namespace, body,
                                                                          _content_type=MERGE_PATCH),
        events=lambda: EventStream(apps.list_namespaced_daemon_set, namespace=namespace, label_selector=selector,
                                   resource_version=version),
        condition_type=client.V1DaemonSetCondition)
