"""Workloads: controller manifests, pod sets by label, controller status, and watch event streams.

Pods and containers come from winsuite.k8s.manifests; these wrap them in ReplicaSets, Deployments, ….
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from kubernetes import client
from kubernetes import watch
from kubernetes.client.exceptions import ApiException

from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s.waits import WaitTimeout
from winsuite.k8s.waits import wait_for
from winsuite.k8s.waits import wait_for_set

log = logging.getLogger("winsuite.k8s")

STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
MERGE_PATCH = "application/merge-patch+json"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
POD_TEMPLATE_HASH = "pod-template-hash"
Manifest = dict[str, Any]


def apps(api: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api)


def batch(api: client.ApiClient) -> client.BatchV1Api:
    return client.BatchV1Api(api)


def selector(labels: Mapping[str, str]) -> str:
    return ",".join(f"{key}={value}" for key, value in sorted(labels.items()))


# -- controller manifests (the e2e framework's fixtures; callers place them with target.place) --------
def template(labels: Mapping[str, str], containers: list[Manifest], **spec: Any) -> Manifest:
    return {"metadata": {"labels": dict(labels)},
            "spec": {"terminationGracePeriodSeconds": 0, "containers": containers, **spec}}


def replica_set(name: str, replicas: int, labels: Mapping[str, str], containers: list[Manifest]) -> Manifest:
    """apps/newRS: the pod labels are also the ReplicaSet's labels and selector."""
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "labels": dict(labels)},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                     "template": template(labels, containers)}}


def replication_controller(name: str, replicas: int, labels: Mapping[str, str],
                           containers: list[Manifest]) -> Manifest:
    """apps/newRC: no selector, so the API server defaults it from the template's labels."""
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": name},
            "spec": {"replicas": replicas, "template": template(labels, containers)}}


def deployment(name: str, replicas: int, labels: Mapping[str, str], containers: list[Manifest],
               strategy: str = "RollingUpdate") -> Manifest:
    """e2edeployment.NewDeployment."""
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": dict(labels)},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                     "strategy": {"type": strategy}, "template": template(labels, containers)}}


# -- pod sets -------------------------------------------------------------------------------------
def _live(items: list[client.V1Pod]) -> list[client.V1Pod]:
    return [p for p in items if p.metadata.deletion_timestamp is None]


def _describe_pods(items: list[client.V1Pod]) -> str:
    return "; ".join(pods.describe(p) for p in items) or "no pods"


def list_pods(api: client.ApiClient, namespace: str, labels: Mapping[str, str]) -> list[client.V1Pod]:
    listing = retry.call(pods.core(api).list_namespaced_pod, namespace, label_selector=selector(labels))
    return list(listing.items)


def wait_for_pods(api: client.ApiClient, namespace: str, labels: Mapping[str, str], *, count: int,
                  state: str = "Running", timeout: float = 300.0, exact: bool = True) -> list[client.V1Pod]:
    """Wait until `count` pods (not being deleted) match the labels, all in `state` ("": any state).

    With exact=False, at least `count` of them must be in `state` and others may exist.
    """
    check = pods.CONDITIONS[state] if state else (lambda _: True)

    def done(items: list[Any]) -> bool:
        live = _live(items)
        matching = [p for p in live if check(p)]
        return len(matching) >= count and (not exact or len(live) == count == len(matching))

    what = f"{count} pod(s) {selector(labels)} in {namespace} to be {state or 'created'}"
    found = wait_for_set(pods.core(api).list_namespaced_pod, namespace=namespace,
                         label_selector=selector(labels), what=what, condition=done, timeout=timeout,
                         describe=_describe_pods)
    return sorted(_live(found), key=lambda p: p.metadata.name)


def controlled_by(obj: Any, owner_uid: str) -> bool:
    return any(ref.controller and ref.uid == owner_uid for ref in obj.metadata.owner_references or [])


def wait_for_gone(list_fn: Callable[..., Any], *, name: str, namespace: str | None, what: str,
                  timeout: float = 120.0) -> None:
    """Wait until no object of that name is listed any more (deleted, its finalizers done)."""
    wait_for_set(list_fn, namespace=namespace, label_selector="", what=f"{what} to be gone",
                 condition=lambda items: all(o.metadata.name != name for o in items), timeout=timeout,
                 describe=lambda items: f"still listed: {sorted(o.metadata.name for o in items)}")


def wait_for_object_set_gone(list_fn: Callable[..., Any], *, namespace: str | None, labels: Mapping[str, str],
                             what: str, timeout: float = 120.0) -> None:
    """Wait until no object matches the labels any more."""
    wait_for_set(list_fn, namespace=namespace, label_selector=selector(labels), what=f"{what} to be gone",
                 condition=lambda items: not items, timeout=timeout,
                 describe=lambda items: f"still listed: {sorted(o.metadata.name for o in items)}")


def wait_for_object(list_fn: Callable[..., Any], *, name: str, namespace: str | None, what: str,
                    condition: Callable[[Any], bool], timeout: float = 120.0) -> Any:
    """Watch one object until `condition` holds; the timeout message carries its last status."""
    return wait_for(list_fn, name=name, namespace=namespace, what=what, condition=condition, timeout=timeout,
                    describe=lambda obj: repr(getattr(obj, "status", obj)))


def update_with_retries(read: Callable[[], Any], replace: Callable[[Any], Any], mutate: Callable[[Any], None],
                        timeout: float = 60.0) -> Any:
    """Read, mutate, replace; start over on a conflict (client-go's RetryOnConflict)."""
    deadline = time.monotonic() + timeout
    while True:
        obj = read()
        mutate(obj)
        try:
            return replace(obj)
        except ApiException as err:
            if err.status != 409 or time.monotonic() > deadline:
                raise


def condition_of(obj: Any, kind: str) -> Any | None:
    return next((c for c in obj.status.conditions or [] if c.type == kind), None)


# -- controller behaviour shared by the controller tests ----------------------------------------------
def create_pod_quota(api: client.ApiClient, namespace: str, name: str, *, pods_allowed: int,
                     timeout: float = 60.0) -> None:
    """newPodQuota, then wait until the quota controller has synced its hard limit."""
    quota = {"metadata": {"name": name}, "spec": {"hard": {"pods": str(pods_allowed)}}}
    core = pods.core(api)
    retry.call(core.create_namespaced_resource_quota, namespace, quota)
    wait_for_object(core.list_namespaced_resource_quota, name=name, namespace=namespace,
                    what=f"resource quota {name} to be synced",
                    condition=lambda q: (q.status.hard or {}).get("pods") == str(pods_allowed),
                    timeout=timeout)


def adopted_or_deleted(api: client.ApiClient, namespace: str, pod_name: str, *, owner_uid: str,
                       timeout: float = 60.0) -> None:
    """The orphan pod is either adopted by the controller or deleted and replaced by it."""
    wait_for_set(pods.core(api).list_namespaced_pod, namespace=namespace, label_selector="",
                 what=f"pod {pod_name} to be adopted (or deleted) by its controller",
                 condition=lambda items: all(controlled_by(p, owner_uid) for p in items
                                             if p.metadata.name == pod_name),
                 timeout=timeout, describe=lambda items: repr([(p.metadata.name, p.metadata.owner_references)
                                                               for p in items]))


def relabel_and_wait_released(api: client.ApiClient, namespace: str, pod_name: str, *, owner_uid: str,
                              labels: dict[str, str], timeout: float = 60.0) -> None:
    """Give a controlled pod labels its controller does not select, then wait until it lets the pod go."""
    core = pods.core(api)

    def relabel(pod: Any) -> None:
        pod.metadata.labels = labels

    update_with_retries(lambda: core.read_namespaced_pod(pod_name, namespace),
                        lambda pod: core.replace_namespaced_pod(pod_name, namespace, pod), relabel)
    pods.wait_until(api, namespace, pod_name, "to be released by its controller",
                    lambda pod: not controlled_by(pod, owner_uid), timeout=timeout)


def wait_for_replica_failure(list_fn: Callable[..., Any], *, name: str, namespace: str, generation: int,
                             present: bool, timeout: float = 60.0) -> None:
    """The controller observed `generation` and has (or no longer has) the ReplicaFailure condition."""
    wait_for_object(list_fn, name=name, namespace=namespace,
                    what=f"{name} {'with' if present else 'without'} a ReplicaFailure condition",
                    condition=lambda obj: (obj.status.observed_generation or 0) >= generation
                    and (condition_of(obj, "ReplicaFailure") is not None) == present, timeout=timeout)


def check_scale_subresource(*, read: Callable[[], Any], replace: Callable[[Any], Any],
                            patch: Callable[[Mapping[str, Any]], Any],
                            spec_replicas: Callable[[], int]) -> None:
    """The /scale subresource reads 1 replica, an update sets 2 and a patch 4, both seen in the spec."""
    scale = read()
    assert (scale.spec.replicas, scale.status.replicas) == (1, 1), f"unexpected scale: {scale}"
    scale.metadata.resource_version = ""  # an unconditional update
    scale.spec.replicas = 2
    assert replace(scale).spec.replicas == 2, "the scale update did not take"
    assert spec_replicas() == 2, "spec.replicas was not modified by the scale update"
    patch({"spec": {"replicas": 4}})
    assert spec_replicas() == 4, "spec.replicas was not modified by the scale patch"


def check_status_subresource(*, read_status: Callable[[], Any], read: Callable[[], Any],
                             replace_status: Callable[[Any], Any],
                             patch_status: Callable[[Mapping[str, Any]], Any],
                             events: Callable[[], EventStream], condition_type: Callable[..., Any]) -> None:
    """GET /status; an updated condition and then a patched one are seen by watchers."""
    name = read_status().metadata.name

    def add_condition(obj: Any) -> None:
        obj.status.conditions = [*(obj.status.conditions or []), condition_type(
            type="StatusUpdate", status="True", reason="E2E", message="Set from e2e test")]

    update_with_retries(read, replace_status, add_condition)
    with events() as stream:
        stream.until(f"{name} to show the updated status condition",
                     lambda _, obj: obj.metadata.name == name and any(
                         (c.type, c.reason, c.message) == ("StatusUpdate", "E2E", "Set from e2e test")
                         for c in obj.status.conditions or []))
    patch_status({"status": {"conditions": [{"type": "StatusPatched", "status": "True"}]}})
    with events() as stream:
        stream.until(f"{name} to show the patched status condition", lambda _, obj: obj.metadata.name == name
                     and any(c.type == "StatusPatched" for c in obj.status.conditions or []))


# -- deployments (test/utils/deployment.go) ----------------------------------------------------------
def deployment_complete(d: client.V1Deployment) -> bool:
    """deploymentutil.DeploymentComplete: every replica updated and available, the spec observed."""
    status, wanted = d.status, d.spec.replicas
    return bool(status.updated_replicas == wanted and status.replicas == wanted
                and status.available_replicas == wanted
                and (status.observed_generation or 0) >= d.metadata.generation)


def wait_for_deployment_complete(api: client.ApiClient, namespace: str, name: str,
                                 timeout: float = 300.0) -> client.V1Deployment:
    return wait_for_object(apps(api).list_namespaced_deployment, name=name, namespace=namespace,
                           what=f"deployment {namespace}/{name} to complete", condition=deployment_complete,
                           timeout=timeout)


def replica_sets_of(api: client.ApiClient, d: client.V1Deployment) -> list[client.V1ReplicaSet]:
    listing = retry.call(apps(api).list_namespaced_replica_set, d.metadata.namespace,
                         label_selector=selector(d.spec.selector.match_labels))
    return [rs for rs in listing.items if controlled_by(rs, d.metadata.uid)]


def template_key(spec: Any) -> tuple[Any, ...]:
    """What makes a ReplicaSet's pod template the deployment's: labels (but the hash) and containers."""
    labels = {k: v for k, v in (spec.metadata.labels or {}).items() if k != POD_TEMPLATE_HASH}
    return tuple(sorted(labels.items())), tuple((c.name, c.image) for c in spec.spec.containers)


def new_replica_set(api: client.ApiClient, d: client.V1Deployment) -> client.V1ReplicaSet | None:
    """The ReplicaSet whose template is the deployment's (deploymentutil.GetNewReplicaSet)."""
    wanted = template_key(d.spec.template)
    return next((rs for rs in replica_sets_of(api, d) if template_key(rs.spec.template) == wanted), None)


def wait_for_deployment_revision_and_image(api: client.ApiClient, namespace: str, name: str, *, revision: str,
                                           image: str, timeout: float = 300.0) -> client.V1Deployment:
    """The deployment and its new ReplicaSet carry `revision` and run `image`."""
    last: list[str] = []

    def matches(d: client.V1Deployment) -> bool:
        rs = new_replica_set(api, d)
        found = ((d.metadata.annotations or {}).get(REVISION_ANNOTATION),
                 d.spec.template.spec.containers[0].image,
                 rs and (rs.metadata.annotations or {}).get(REVISION_ANNOTATION),
                 rs and rs.spec.template.spec.containers[0].image)
        last[:] = [f"deployment revision/image, new ReplicaSet revision/image: {found}"]
        return found == (revision, image, revision, image)

    try:
        return wait_for_object(apps(api).list_namespaced_deployment, name=name, namespace=namespace,
                               what=f"deployment {namespace}/{name} at revision {revision} with {image}",
                               condition=matches, timeout=timeout)
    except WaitTimeout as err:
        raise AssertionError(f"{err}; {last[0] if last else ''}") from err


# -- watch event streams (client-go watchtools.Until) -------------------------------------------------
Event = tuple[str, Any]


def listed_version(list_fn: Callable[..., Any], **kwargs: Any) -> str:
    """The resource version of a fresh LIST: a watch from there sees every later change."""
    return str(retry.call(list_fn, **kwargs).metadata.resource_version)


class EventStream:
    """The events of a watch started at a resource version, consumed one condition at a time.

    A background thread reads the watch into a queue, so each `until` has its own deadline; the watch
    resumes from the last seen resource version when the API server closes it.
    """

    def __init__(self, list_fn: Callable[..., Any], *, resource_version: str, **kwargs: Any) -> None:
        self._queue: queue.Queue[Event | BaseException] = queue.Queue()
        self._watch = watch.Watch()
        self._closed = threading.Event()
        self.seen: list[Event] = []
        threading.Thread(target=self._read, args=(list_fn, resource_version, kwargs), daemon=True).start()

    def _read(self, list_fn: Callable[..., Any], resource_version: str, kwargs: dict[str, Any]) -> None:
        try:
            for event in self._watch.stream(list_fn, resource_version=resource_version, **kwargs):
                self._queue.put((event["type"], event["object"]))
        except Exception as err:  # handed to the reader: the test fails with the watch's own error
            if not self._closed.is_set():
                self._queue.put(err)

    def _next(self, timeout: float) -> Event | None:
        """The next event within `timeout` seconds (0: only one already received), or None."""
        try:
            item = self._queue.get(timeout=timeout) if timeout > 0 else self._queue.get_nowait()
        except queue.Empty:
            return None
        if isinstance(item, BaseException):
            raise AssertionError(f"the watch failed: {item}") from item
        self.seen.append(item)
        return item

    def until(self, what: str, condition: Callable[[str, Any], bool], timeout: float = 60.0) -> Event:
        """Read events until one satisfies `condition(type, object)`; return it."""
        log.info("waiting up to %.0fs for %s", timeout, what)
        deadline = time.monotonic() + timeout
        while (remaining := deadline - time.monotonic()) > 0:
            item = self._next(remaining)
            if item is None:
                break
            if condition(*item):
                return item
        last = self.seen[-1] if self.seen else None
        raise WaitTimeout(what, timeout, "no watch event" if last is None
                          else f"{last[0]} {getattr(last[1].metadata, 'name', '?')}: {last[1]}")

    def settle(self, seconds: float) -> list[Event]:
        """Every event that arrives within `seconds` (for checks that a state stays stable)."""
        events: list[Event] = []
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0 and (item := self._next(remaining)) is not None:
            events.append(item)
        return events

    def drain(self) -> list[Event]:
        """Every event received so far and not yet read, without waiting."""
        events: list[Event] = []
        while (item := self._next(0)) is not None:
            events.append(item)
        return events

    def close(self) -> None:
        self._closed.set()
        self._watch.stop()
        response = getattr(self._watch, "_resp", None)
        if response is not None:
            response.close()  # unblocks the reader thread, which then ends

    def __enter__(self) -> EventStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
