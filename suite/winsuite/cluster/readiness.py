"""A cluster is ready when the controllers the tests rely on work, each observed doing its job (never slept on): a new
namespace gets its service account, the root CA and a token; a ResourceQuota counts an object created in it; a
deleted namespace goes away. A failure names the controller that did not come up."""

from __future__ import annotations

import contextlib
import dataclasses
import time
import uuid
from collections.abc import Callable
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from winsuite.errors import ClusterUnreachable
from winsuite.k8s import retry
from winsuite.k8s.waits import WaitTimeout
from winsuite.k8s.waits import wait_for
from winsuite.k8s.waits import wait_for_set

PROBE_PREFIX = "winsuite-readiness-"
PROBE_LABEL = "winsuite.io/readiness-probe"
STEP_TIMEOUT = 90.0  # each controller gets this long; a loaded two-core machine needs seconds, not minutes
QUOTA = "winsuite-readiness"


class ControllerNotReady(ClusterUnreachable):
    """A controller the tests rely on did not do its job in time: names it and what was last seen."""


class NotDone(Exception):
    """A step's request was answered, but its job was not done."""


def _service_account(core: client.CoreV1Api, namespace: str, timeout: float) -> None:
    wait_for(core.list_namespaced_service_account, name="default", namespace=namespace,
             what=f"service account {namespace}/default", condition=lambda _: True, timeout=timeout)


def _root_ca(core: client.CoreV1Api, namespace: str, timeout: float) -> None:
    wait_for(core.list_namespaced_config_map, name="kube-root-ca.crt", namespace=namespace,
             what=f"ConfigMap {namespace}/kube-root-ca.crt", condition=lambda cm: "ca.crt" in (cm.data or {}),
             timeout=timeout)


def _token(core: client.CoreV1Api, namespace: str, timeout: float) -> None:
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "spec": {"expirationSeconds": 600}}
    made = retry.call(core.create_namespaced_service_account_token, "default", namespace, request)
    if not made.status.token:
        raise NotDone("the TokenRequest was answered without a token")


def _used_configmaps(quota: Any) -> int | None:
    used = (quota.status.used or {}) if quota.status else {}
    return int(used["configmaps"]) if "configmaps" in used else None


def _quota_counts(core: client.CoreV1Api, namespace: str, timeout: float) -> None:
    """ResourceQuota's own e2e flow: the quota gets its status, then a new ConfigMap is counted in it."""
    retry.call(core.create_namespaced_resource_quota, namespace,
               {"metadata": {"name": QUOTA}, "spec": {"hard": {"configmaps": "10"}}})
    counted = wait_for(core.list_namespaced_resource_quota, name=QUOTA, namespace=namespace,
                       what=f"ResourceQuota {namespace}/{QUOTA} to have its usage counted",
                       condition=lambda q: _used_configmaps(q) is not None, timeout=timeout,
                       describe=lambda q: repr(q.status))
    before = _used_configmaps(counted) or 0
    retry.call(core.create_namespaced_config_map, namespace, {"metadata": {"name": "counted"}})
    wait_for(core.list_namespaced_resource_quota, name=QUOTA, namespace=namespace,
             what=f"ResourceQuota {namespace}/{QUOTA} to count a new ConfigMap ({before} -> {before + 1})",
             condition=lambda q: _used_configmaps(q) == before + 1, timeout=timeout,
             describe=lambda q: repr(q.status))


def _namespace_deleted(core: client.CoreV1Api, namespace: str, timeout: float) -> None:
    retry.call(core.delete_namespace, namespace)
    wait_for_set(core.list_namespace, namespace=None, label_selector=PROBE_LABEL,
                 what=f"namespace {namespace} to be deleted",
                 condition=lambda items: all(ns.metadata.name != namespace for ns in items), timeout=timeout,
                 describe=lambda items: "; ".join(f"{ns.metadata.name}: {ns.status.phase} {ns.status.conditions}"
                                                  for ns in items if ns.metadata.name == namespace))


@dataclasses.dataclass(frozen=True)
class Step:
    controller: str  # as kube-controller-manager names it (--controllers), or the API that serves the job
    what: str  # the job observed
    check: Callable[[client.CoreV1Api, str, float], None]


STEPS = (
    Step("serviceaccount", "the namespace's default service account", _service_account),
    Step("root-ca-certificate-publisher", "the namespace's kube-root-ca.crt ConfigMap", _root_ca),
    Step("serviceaccount-token (TokenRequest)", "a token for the default service account", _token),
    Step("resourcequota", "a ResourceQuota's usage, then a new ConfigMap counted in it", _quota_counts),
    Step("namespace", "the probe namespace deleted, with everything in it", _namespace_deleted),
)


def wait_for_controllers(api: client.ApiClient, report: Callable[[str], None], *,
                         step_timeout: float = STEP_TIMEOUT) -> float:
    """Run every step in a namespace of its own, removed at the end; returns the seconds taken in all."""
    core = client.CoreV1Api(api)
    namespace = f"{PROBE_PREFIX}{uuid.uuid4().hex[:6]}"
    started = time.monotonic()
    retry.call(core.create_namespace, {"metadata": {"name": namespace, "labels": {PROBE_LABEL: "true"}}})
    try:
        for step in STEPS:
            begun = time.monotonic()
            try:
                step.check(core, namespace, step_timeout)
            except (WaitTimeout, ApiException, NotDone) as err:
                raise ControllerNotReady(f"the {step.controller} controller is not working: {step.what} did not "
                                         f"happen ({_short(err)})") from err
            report(f"  controller {step.controller}: {step.what} after {time.monotonic() - begun:.1f}s")
    finally:
        _delete_quietly(core, namespace)
    return time.monotonic() - started


def _delete_quietly(core: client.CoreV1Api, namespace: str) -> None:
    """After a failed step, the probe namespace is left to the namespace controller (never waited on)."""
    with contextlib.suppress(ApiException):  # gone already (the last step deleted it), or the API server failed
        core.delete_namespace(namespace)


def _short(err: BaseException) -> str:
    return f"{err.status} {err.reason}" if isinstance(err, ApiException) else str(err)[:600]
