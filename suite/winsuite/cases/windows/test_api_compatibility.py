"""API compatibility (seed 002): the API server rejects Linux-only fields of pods with spec.os.name windows."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods

Mutation = Callable[[dict[str, Any]], None]

windows_api = Describe(Area("sig-windows"), "API compatibility", "a pod with spec.os.name windows")


def _pod_field(key: str, value: object) -> Mutation:
    return lambda pod: pod["spec"].__setitem__(key, value)


def _pod_security(key: str, value: object) -> Mutation:
    return lambda pod: pod["spec"].setdefault("securityContext", {}).__setitem__(key, value)


def _container_security(key: str, value: object) -> Mutation:
    return lambda pod: pod["spec"]["containers"][0].setdefault("securityContext", {}).__setitem__(key, value)


# The 20 fields seed 002 lists: field path (as the API server reports it) -> how to set it.
FORBIDDEN: dict[str, Mutation] = {
    "spec.hostPID": _pod_field("hostPID", True),
    "spec.hostIPC": _pod_field("hostIPC", True),
    "spec.securityContext.seLinuxOptions": _pod_security("seLinuxOptions", {"level": "s0:c123,c456"}),
    "spec.securityContext.seccompProfile": _pod_security("seccompProfile", {"type": "RuntimeDefault"}),
    "spec.securityContext.fsGroup": _pod_security("fsGroup", 2000),
    "spec.securityContext.fsGroupChangePolicy": _pod_security("fsGroupChangePolicy", "OnRootMismatch"),
    "spec.securityContext.sysctls": _pod_security("sysctls", [{"name": "kernel.shm_rmid_forced", "value": "0"}]),
    "spec.shareProcessNamespace": _pod_field("shareProcessNamespace", True),
    "spec.securityContext.runAsUser": _pod_security("runAsUser", 1000),
    "spec.securityContext.runAsGroup": _pod_security("runAsGroup", 3000),
    "spec.securityContext.supplementalGroups": _pod_security("supplementalGroups", [4000]),
    "spec.containers[0].securityContext.seLinuxOptions": _container_security("seLinuxOptions", {"level": "s0:c1"}),
    "spec.containers[0].securityContext.seccompProfile": _container_security("seccompProfile",
                                                                              {"type": "RuntimeDefault"}),
    "spec.containers[0].securityContext.capabilities": _container_security("capabilities", {"add": ["NET_ADMIN"]}),
    "spec.containers[0].securityContext.readOnlyRootFilesystem": _container_security("readOnlyRootFilesystem", True),
    "spec.containers[0].securityContext.privileged": _container_security("privileged", True),
    "spec.containers[0].securityContext.allowPrivilegeEscalation": _container_security(
        "allowPrivilegeEscalation", False),
    "spec.containers[0].securityContext.procMount": _container_security("procMount", "Default"),
    "spec.containers[0].securityContext.runAsUser": _container_security("runAsUser", 1000),
    "spec.containers[0].securityContext.runAsGroup": _container_security("runAsGroup", 3000),
}

# Fields the pinned API server forbids for Windows pods beyond seed 002's list
# (pkg/apis/core/validation: validateWindows and validatePodResources of k8s.io/kubernetes@v1.36.3).
ALSO_FORBIDDEN: dict[str, Mutation] = {
    "spec.hostUsers": _pod_field("hostUsers", False),
    "spec.securityContext.appArmorProfile": _pod_security("appArmorProfile", {"type": "RuntimeDefault"}),
    "spec.securityContext.supplementalGroupsPolicy": _pod_security("supplementalGroupsPolicy", "Merge"),
    "spec.securityContext.seLinuxChangePolicy": _pod_security("seLinuxChangePolicy", "Recursive"),
    "spec.containers[0].securityContext.appArmorProfile": _container_security("appArmorProfile",
                                                                               {"type": "RuntimeDefault"}),
    "spec.resources": _pod_field("resources", {"limits": {"cpu": "1", "memory": "1Gi"}}),
}


def windows_pod(target: Target, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"os": {"name": "windows"},
                 "containers": [{"name": "pause", "image": target.image("pause", os="windows")}]},
    }


def forbidden_pod(target: Target, field: str) -> dict[str, Any]:
    pod = windows_pod(target, "forbidden-field")
    FORBIDDEN[field](pod)
    return pod


def also_forbidden_pod(target: Target, field: str) -> dict[str, Any]:
    pod = windows_pod(target, "also-forbidden")
    ALSO_FORBIDDEN[field](pod)
    return pod


def compatible_pod(target: Target) -> dict[str, Any]:
    pod = windows_pod(target, "windows-compatible")
    pod["spec"]["securityContext"] = {"windowsOptions": {"runAsUserName": "ContainerUser"}}
    pod["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "500m", "memory": "256Mi"}}
    return pod


def host_process_pods(target: Target) -> list[dict[str, Any]]:
    """A HostProcess pod without hostNetwork (rejected), and with it (admitted)."""
    pod = windows_pod(target, "host-process")
    pod["spec"]["securityContext"] = {"windowsOptions": {"hostProcess": True,
                                                         "runAsUserName": "NT AUTHORITY\\SYSTEM"}}
    return [pod, {**pod, "spec": {**pod["spec"], "hostNetwork": True}}]


SEED = "no twin: seed 002 (the fields forbidden with spec.os.name: windows)"


def dry_run_create(api: client.ApiClient, namespace: str, pod: dict[str, Any]) -> ApiException | None:
    """Create the pod with server-side dry run: full admission and validation, nothing stored."""
    try:
        client.CoreV1Api(api).create_namespaced_pod(namespace, pod, dry_run="All")
    except ApiException as err:
        return err
    return None


def forbidden_fields(error: ApiException) -> dict[str, str]:
    """field path -> message of every cause in a 422 answer."""
    causes = json.loads(error.body).get("details", {}).get("causes", [])
    return {c.get("field", ""): c.get("message", "") for c in causes}


def assert_rejected_for(api: client.ApiClient, namespace: str, pod: dict[str, Any], field: str,
                        says: tuple[str, ...] = ("Forbidden", "windows pod")) -> None:
    error = dry_run_create(api, namespace, pod)
    assert error is not None, f"the API server admitted a windows pod with {field} set"
    assert error.status == 422, f"expected 422 Invalid for {field}, got {error.status}: {error.body}"
    causes = forbidden_fields(error)
    assert field in causes, f"{field} is not among the rejected fields: {causes}"
    assert all(word in causes[field] for word in says), f"{field}: {causes[field]!r} does not say {says}"


@windows_pods(lambda target, field: [forbidden_pod(target, field)], upstream=SEED)
@windows_api.it_each("should be rejected when {entry} is set", argname="field", entries={f: f for f in FORBIDDEN})
def test_forbidden_field_is_rejected(api: client.ApiClient, namespace: str, target: Target, field: str) -> None:
    pod = forbidden_pod(target, field)
    assert_rejected_for(api, namespace, pod, field)


@windows_pods(lambda target, field: [also_forbidden_pod(target, field)],
              upstream="no twin: validateWindows of pkg/apis/core/validation (kubernetes v1.36.3)")
@windows_api.it_each("should also be rejected by the pinned API server when {entry} is set", argname="field",
                      entries={f: f for f in ALSO_FORBIDDEN})
def test_additionally_forbidden_field_is_rejected(api: client.ApiClient, namespace: str, target: Target,
                                                  field: str) -> None:
    pod = also_forbidden_pod(target, field)
    assert_rejected_for(api, namespace, pod, field)


@windows_pods(lambda target: [compatible_pod(target)], upstream=SEED)
@windows_api.it("should be admitted when it sets only Windows-compatible fields")
def test_windows_compatible_pod_is_admitted(api: client.ApiClient, namespace: str, target: Target) -> None:
    error = dry_run_create(api, namespace, compatible_pod(target))
    assert error is None, f"a Windows-compatible windows pod was rejected: {error.body if error else ''}"


@windows_pods(host_process_pods, upstream=SEED)
@windows_api.it("should be rejected when it has hostProcess containers without hostNetwork")
def test_host_process_requires_host_network(api: client.ApiClient, namespace: str, target: Target) -> None:
    without, with_host_network = host_process_pods(target)
    assert_rejected_for(api, namespace, without, "spec.hostNetwork", says=("Invalid", "hostNetwork must be true"))
    error = dry_run_create(api, namespace, with_host_network)
    allowed = error is None
    policy_forbids = error is not None and "disallowed by cluster policy" in error.body
    assert allowed or policy_forbids, f"a HostProcess pod with hostNetwork was rejected: {error.body if error else ''}"
    if policy_forbids:
        pytest.skip("the cluster disallows privileged (HostProcess) pods: --allow-privileged=false")
