"""StatefulSet (test/e2e/apps/statefulset.go): ordered and burst scaling with stable names, scale, status."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Slow
from winsuite.authoring.target import Target
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import services
from winsuite.k8s import waits
from winsuite.k8s import workloads
from winsuite.k8s.waits import wait_for_set
from winsuite.k8s.workloads import MERGE_PATCH
from winsuite.k8s.workloads import STRATEGIC_MERGE_PATCH
from winsuite.k8s.workloads import EventStream

basic = Describe(Area("sig-apps"), "StatefulSet", "Basic StatefulSet functionality [StatefulSetBasic]")
TWIN = "[sig-apps] StatefulSet Basic StatefulSet functionality [StatefulSetBasic] "

SS_NAME = "ss"
LABELS = {"foo": "bar", "baz": "blah"}
HEADLESS_SERVICE = "test"
TIMEOUT = 240.0  # StatefulSetTimeout is 10m; the suite's per-test budget is shorter
# setHTTPProbe: Ready while test-webserver serves this file; moving it away breaks readiness.
PROBE_PATH = "/localhost.crt"
HTTP_PROBE = {"httpGet": {"path": PROBE_PATH, "port": 80}, "periodSeconds": 1, "successThreshold": 1,
              "failureThreshold": 1}
IMAGES = ["agnhost-prev"]


class StatefulSet:
    """One StatefulSet under test with the e2e framework's helpers (e2estatefulset) as methods."""

    def __init__(self, api: client.ApiClient, namespace: str, name: str = SS_NAME,
                 labels: dict[str, str] | None = None) -> None:
        self.api, self.namespace, self.name = api, namespace, name
        self.labels = labels or LABELS
        self.apps = workloads.apps(api)

    def manifest(self, target: Target, replicas: int) -> dict[str, Any]:
        """NewStatefulSet (no volumes) with setHTTPProbe, placed on the target OS."""
        webserver = {"name": "webserver", "image": target.image("agnhost-prev"), "args": ["test-webserver"],
                     "readinessProbe": HTTP_PROBE}
        manifest = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": self.name},
                    "spec": {"selector": {"matchLabels": self.labels}, "replicas": replicas,
                             "serviceName": HEADLESS_SERVICE, "updateStrategy": {"type": "RollingUpdate"},
                             "template": {"metadata": {"labels": self.labels, "annotations": {}},
                                          "spec": {"containers": [webserver]}}}}
        return target.place(manifest)

    def create(self, target: Target, replicas: int) -> client.V1StatefulSet:
        return retry.call(self.apps.create_namespaced_stateful_set, self.namespace,
                          self.manifest(target, replicas))

    def get(self) -> client.V1StatefulSet:
        return retry.call(self.apps.read_namespaced_stateful_set, self.name, self.namespace)

    def wait_for_running(self, count: int, ready: int) -> None:
        """WaitForRunning: `count` pods, all Running, those below ordinal `ready` Ready and the rest not."""

        def done(items: list[Any]) -> bool:
            if len(items) > count:
                raise AssertionError(f"too many pods scheduled, expected {count} got {len(items)}")
            return len(items) == count and all(
                p.status.phase == "Running"
                and pods.CONDITIONS["Ready"](p) == (int(p.metadata.name.rsplit("-", 1)[1]) < ready)
                for p in items)

        wait_for_set(pods.core(self.api).list_namespaced_pod, namespace=self.namespace,
                     label_selector=workloads.selector(self.labels),
                     what=f"{count} running stateful pods, {ready} of them ready", condition=done,
                     timeout=TIMEOUT, describe=pods.describe_all)

    def wait_for_status(self, field: str, count: int | None = None) -> client.V1StatefulSet:
        """The controller observed the current generation (and status.<field> is `count`)."""
        generation = self.get().metadata.generation
        return workloads.wait_for_object(
            self.apps.list_namespaced_stateful_set, name=self.name, namespace=self.namespace,
            what=f"statefulset {self.name} status.{field} to be {count}",
            condition=lambda ss: (ss.status.observed_generation or 0) >= generation
            and (count is None or (getattr(ss.status, field) or 0) == count), timeout=TIMEOUT)

    def update_replicas(self, count: int) -> None:
        def scale(ss: Any) -> None:
            ss.spec.replicas = count

        workloads.update_with_retries(self.get, lambda ss: self.apps.replace_namespaced_stateful_set(
            self.name, self.namespace, ss), scale)

    def scale(self, count: int) -> None:
        """e2estatefulset.Scale: update the replicas and wait until that many pods exist."""
        self.update_replicas(count)
        self.wait_for_pod_count(count)

    def wait_for_pod_count(self, count: int) -> None:
        wait_for_set(pods.core(self.api).list_namespaced_pod, namespace=self.namespace,
                     label_selector=workloads.selector(self.labels), what=f"{count} stateful pods",
                     condition=lambda items: len(items) == count, timeout=TIMEOUT,
                     describe=pods.describe_all)

    def hold_pod_count(self, count: int, seconds: float) -> None:
        """confirmStatefulPodCount (hard): the pod count stays `count` for `seconds`."""

        def unchanged(items: list[Any]) -> None:
            assert len(items) == count, \
                f"statefulset {self.name} scaled unexpectedly from {count} to {len(items)} pods"

        waits.hold(pods.core(self.api).list_namespaced_pod, namespace=self.namespace,
                   label_selector=workloads.selector(self.labels), what=f"the pod count to stay {count}",
                   check=unchanged, duration=seconds)

    def exec_in_pods(self, command: str) -> None:
        """ExecInStatefulPods: run a shell command in every stateful pod, retried while a container starts."""
        for pod in workloads.list_pods(self.api, self.namespace, self.labels):
            self.exec_in(pod.metadata.name, command)

    def exec_in(self, name: str, command: str) -> None:
        """RunHostCmdWithRetries: a shell command in one pod, retried while its container is starting."""
        waits.poll(f"{command!r} to run in pod {name}", lambda: pods.exec_(
            self.api, self.namespace, name, ["/bin/sh", "-x", "-c", command]).check(), timeout=TIMEOUT)

    def break_probe(self) -> None:
        self.exec_in_pods(f"mv -v {PROBE_PATH} /tmp/ || true")

    def restore_probe(self) -> None:
        self.exec_in_pods(f"mv -v /tmp{PROBE_PATH} / || true")


def headless_service(api: client.ApiClient, namespace: str) -> None:
    """The governing Service every test of the Describe creates first (CreateServiceSpec, headless)."""
    services.create(api, namespace, {"metadata": {"name": HEADLESS_SERVICE},
                                     "spec": {"selector": LABELS, "clusterIP": "None",
                                              "ports": [{"port": 80, "name": "http", "protocol": "TCP"}]}})


def in_order(kind: str, names: list[str]) -> Any:
    """A watch condition: events of `kind` named `names` happen in that order."""
    expected = list(names)

    def seen(event_kind: str, pod: Any) -> bool:
        if event_kind == kind and expected and pod.metadata.name == expected[0]:
            expected.pop(0)
        return not expected

    return seen


@basic.it("Scaling should happen in predictable order and halt if any stateful pod is unhealthy", Slow,
          Conformance, twin=f"{TWIN}Scaling should happen in predictable order and halt if any stateful "
                            "pod is unhealthy [Slow] [Conformance]",
          needs=[Capability.RUNS_CONTAINERS, Capability.EXEC], images=IMAGES, category="Core.Concurrent")
def test_ordered_scaling(api: client.ApiClient, namespace: str, target: Target) -> None:
    headless_service(api, namespace)
    ss, core, selector = StatefulSet(api, namespace), pods.core(api), workloads.selector(LABELS)
    version = workloads.listed_version(core.list_namespaced_pod, namespace=namespace, label_selector=selector)
    with EventStream(core.list_namespaced_pod, namespace=namespace, label_selector=selector,
                     resource_version=version) as created:
        ss.create(target, 1)
        ss.wait_for_running(1, 1)
        ss.break_probe()
        ss.wait_for_running(1, 0)
        ss.wait_for_status("ready_replicas", 0)
        ss.update_replicas(3)
        ss.hold_pod_count(1, 10.0)  # scale-up halts while ss-0 is unhealthy
        ss.restore_probe()
        ss.wait_for_running(3, 3)
        created.until("pods ss-0, ss-1, ss-2 to be created in that order",
                      in_order("ADDED", [f"{SS_NAME}-{i}" for i in range(3)]), timeout=TIMEOUT)

    version = workloads.listed_version(core.list_namespaced_pod, namespace=namespace, label_selector=selector)
    with EventStream(core.list_namespaced_pod, namespace=namespace, label_selector=selector,
                     resource_version=version) as deleted:
        ss.break_probe()
        ss.wait_for_status("ready_replicas", 0)
        ss.wait_for_running(3, 0)
        ss.update_replicas(0)
        ss.hold_pod_count(3, 10.0)  # scale-down halts while the pods are unhealthy
        ss.restore_probe()
        ss.scale(0)
        deleted.until("pods ss-2, ss-1, ss-0 to be deleted in that order",
                      in_order("DELETED", [f"{SS_NAME}-{i}" for i in (2, 1, 0)]), timeout=TIMEOUT)


@basic.it("Burst scaling should run to completion even with unhealthy pods", Slow, Conformance,
          twin=f"{TWIN}Burst scaling should run to completion even with unhealthy pods [Slow] [Conformance]",
          needs=[Capability.RUNS_CONTAINERS, Capability.EXEC], images=IMAGES, category="Core.Concurrent")
def test_burst_scaling(api: client.ApiClient, namespace: str, target: Target) -> None:
    headless_service(api, namespace)
    ss = StatefulSet(api, namespace)
    manifest = ss.manifest(target, 1)
    manifest["spec"]["podManagementPolicy"] = "Parallel"
    retry.call(ss.apps.create_namespaced_stateful_set, namespace, manifest)
    ss.wait_for_running(1, 1)

    ss.break_probe()
    ss.wait_for_running(1, 0)
    ss.wait_for_status("ready_replicas", 0)
    ss.update_replicas(3)
    ss.wait_for_pod_count(3)  # scale-up goes on although ss-0 is unhealthy
    ss.restore_probe()
    ss.wait_for_running(3, 3)

    ss.break_probe()
    ss.wait_for_status("ready_replicas", 0)
    ss.wait_for_running(3, 0)
    ss.update_replicas(0)
    ss.wait_for_pod_count(0)  # scale-down goes on although every pod is unhealthy
    ss.restore_probe()
    ss.scale(0)
    ss.wait_for_status("replicas", 0)


@basic.it("should have a working scale subresource", Conformance,
          twin=f"{TWIN}should have a working scale subresource [Conformance]",
          needs=[Capability.RUNS_CONTAINERS], images=IMAGES, category="Core.Concurrent")
def test_scale_subresource(api: client.ApiClient, namespace: str, target: Target) -> None:
    headless_service(api, namespace)
    ss = StatefulSet(api, namespace)
    ss.create(target, 1)
    ss.wait_for_running(1, 1)
    ss.wait_for_status("replicas")
    apps = ss.apps
    workloads.check_scale_subresource(
        read=lambda: apps.read_namespaced_stateful_set_scale(SS_NAME, namespace),
        replace=lambda scale: apps.replace_namespaced_stateful_set_scale(SS_NAME, namespace, scale),
        patch=lambda body: apps.patch_namespaced_stateful_set_scale(SS_NAME, namespace, body,
                                                                    _content_type=STRATEGIC_MERGE_PATCH),
        spec_replicas=lambda: ss.get().spec.replicas)


@basic.it("should list, patch and delete a collection of StatefulSets", Conformance,
          twin=f"{TWIN}should list, patch and delete a collection of StatefulSets [Conformance]",
          needs=[Capability.RUNS_CONTAINERS], images=[*IMAGES, "pause"], category="Core.Concurrent")
def test_list_patch_delete_collection(api: client.ApiClient, namespace: str, target: Target) -> None:
    headless_service(api, namespace)
    ss = StatefulSet(api, namespace, "test-ss", {"name": "sample-pod", "pod": "agnhost"})
    created = ss.create(target, 1)
    ss.wait_for_running(1, 1)
    ss.wait_for_status("replicas")

    pause = target.image("pause")
    pod_spec = {"terminationGracePeriodSeconds": 1, "containers": [{"name": "test-ss", "image": pause}]}
    patch = {"metadata": {"labels": {"test-ss": "patched"}},
             "spec": {"replicas": 2, "template": {"spec": pod_spec}}}
    patched = ss.apps.patch_namespaced_stateful_set("test-ss", namespace, patch,
                                                    _content_type=STRATEGIC_MERGE_PATCH)
    assert int(patched.metadata.resource_version) > int(created.metadata.resource_version), \
        "the patched object should have a larger resource version"
    current = ss.get()
    assert current.spec.replicas == 2, "statefulset should have 2 replicas"
    assert current.spec.template.spec.containers[0].image == pause, \
        f"statefulset not using the patched image: {current.spec.template.spec.containers[0].image}"
    ss.wait_for_running(2, 2)
    ss.wait_for_status("replicas")

    listed = retry.call(ss.apps.list_stateful_set_for_all_namespaces, label_selector="test-ss=patched").items
    assert len(listed) == 1, f"filtered list wasn't found: {[s.metadata.name for s in listed]}"
    ss.apps.delete_collection_namespaced_stateful_set(namespace, label_selector="test-ss=patched",
                                                      grace_period_seconds=1)
    listed = retry.call(ss.apps.list_stateful_set_for_all_namespaces, label_selector="test-ss=patched").items
    assert not listed, f"filtered list should have no StatefulSets: {[s.metadata.name for s in listed]}"


@basic.it("should validate Statefulset Status endpoints", Conformance,
          twin=f"{TWIN}should validate Statefulset Status endpoints [Conformance]",
          needs=[Capability.RUNS_CONTAINERS], images=IMAGES, category="Core.Concurrent")
def test_status_endpoints(api: client.ApiClient, namespace: str, target: Target) -> None:
    headless_service(api, namespace)
    ss = StatefulSet(api, namespace)
    version = workloads.listed_version(ss.apps.list_stateful_set_for_all_namespaces,
                                       label_selector="e2e=testing")
    ss.create(target, 1)
    ss.wait_for_running(1, 1)
    ss.wait_for_status("replicas")
    ss.apps.patch_namespaced_stateful_set(SS_NAME, namespace, {"metadata": {"labels": {"e2e": "testing"}}},
                                          _content_type=STRATEGIC_MERGE_PATCH)
    workloads.check_status_subresource(
        read_status=lambda: ss.apps.read_namespaced_stateful_set_status(SS_NAME, namespace),
        read=ss.get,
        replace_status=lambda obj: ss.apps.replace_namespaced_stateful_set_status(SS_NAME, namespace, obj),
        patch_status=lambda body: ss.apps.patch_namespaced_stateful_set_status(SS_NAME, namespace, body,
                                                                               _content_type=MERGE_PATCH),
        events=lambda: EventStream(ss.apps.list_namespaced_stateful_set, namespace=namespace,
                                   label_selector="e2e=testing", resource_version=version),
        condition_type=client.V1StatefulSetCondition)
