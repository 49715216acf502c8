"""OS placement for upstream specs without a webhook: a MutatingAdmissionPolicy for the run's e2e namespaces.

Upstream specs do not place their pods by OS. For the run's duration, pods created in namespaces of upstream's e2e
framework get the placement native pods get (authoring/targeting.py): the target OS's nodeSelector, the Windows
taint's toleration, spec.os.name and the run's RuntimeClass (never on HostProcess pods). Never a toleration of the
simulated nodes' taint: a pod there would run nothing.
"""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client

from winsuite.authoring.targeting import Placement
from winsuite.k8s import retry
from winsuite.k8s.namespaces import E2E_FRAMEWORK_LABEL
from winsuite.k8s.namespaces import RUN_ID_LABEL
from winsuite.k8s.not_found import ignore_not_found

GROUP = "admissionregistration.k8s.io"
VERSION = "v1"
POLICIES = "mutatingadmissionpolicies"
BINDINGS = "mutatingadmissionpolicybindings"
NO_API = (f"the API server has no MutatingAdmissionPolicy ({GROUP}/{VERSION}): upstream specs' pods are not "
          "placed by OS; on a cluster that mixes Linux and Windows nodes, taint the nodes not under test (or "
          "install a placement webhook) so they land on the target OS")
_HOST_PROCESS = ("has(object.spec.securityContext) && has(object.spec.securityContext.windowsOptions) && "
                 "has(object.spec.securityContext.windowsOptions.hostProcess) && "
                 "object.spec.securityContext.windowsOptions.hostProcess")


def name_of(run_id: str) -> str:
    return f"winsuite-placement-{run_id}".lower()


def _cel(value: object) -> str:
    """A JSON value as a CEL literal (JSON's strings, numbers and maps are CEL's too)."""
    return json.dumps(value)


def patch_expression(placement: Placement) -> str:
    """The CEL expression that returns the JSON patches placing one pod."""
    parts = []
    for key, value in placement.node_selector().items():
        path = f'"/spec/nodeSelector/" + jsonpatch.escapeKey({_cel(key)})'
        parts.append(f"(has(object.spec.nodeSelector) ? [JSONPatch{{op: \"add\", path: {path}, value: {_cel(value)}}}]"
                     f" : [JSONPatch{{op: \"add\", path: \"/spec/nodeSelector\", value: {_cel({key: value})}}}])")
    for toleration in placement.tolerations():
        typed = "Object.spec.tolerations{" + ", ".join(f"{k}: {_cel(v)}" for k, v in toleration.items()) + "}"
        # The policy may be invoked again after other admission plugins: add the toleration once.
        present = " && ".join(f"has(t.{k}) && t.{k} == {_cel(v)}" for k, v in toleration.items())
        parts.append(f"(!has(object.spec.tolerations) ? [JSONPatch{{op: \"add\", path: \"/spec/tolerations\", "
                     f"value: [{typed}]}}] : object.spec.tolerations.exists(t, {present}) ? [] : "
                     f"[JSONPatch{{op: \"add\", path: \"/spec/tolerations/-\", value: {typed}}}])")
    parts.append(f"(has(object.spec.os) ? [] : [JSONPatch{{op: \"add\", path: \"/spec/os\", "
                 f"value: Object.spec.os{{name: {_cel(placement.target_os)}}}}}])")
    if placement.runtime_class:
        parts.append(f"(has(object.spec.runtimeClassName) || ({_HOST_PROCESS}) ? [] : [JSONPatch{{op: \"add\", "
                     f"path: \"/spec/runtimeClassName\", value: {_cel(placement.runtime_class)}}}])")
    return " + ".join(parts)


def policy(run_id: str, placement: Placement) -> dict[str, object]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": name_of(run_id), "labels": {RUN_ID_LABEL: run_id}},
        "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                    "operations": ["CREATE"], "resources": ["pods"]}]},
            "failurePolicy": "Fail",
            "reinvocationPolicy": "IfNeeded",
            "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": patch_expression(placement)}}],
        },
    }


def binding(run_id: str) -> dict[str, object]:
    """Only namespaces of upstream's e2e framework (it labels each one it creates)."""
    return {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": name_of(run_id), "labels": {RUN_ID_LABEL: run_id}},
        "spec": {"policyName": name_of(run_id), "matchResources": {"namespaceSelector": {
            "matchExpressions": [{"key": E2E_FRAMEWORK_LABEL, "operator": "Exists"}]}}},
    }


def install(api: client.ApiClient, run_id: str, placement: Placement) -> bool:
    """Create the policy and its binding; False where the API server has no MutatingAdmissionPolicy."""
    objects = client.CustomObjectsApi(api)
    with ignore_not_found() as answer:
        retry.call(objects.create_cluster_custom_object, GROUP, VERSION, POLICIES, policy(run_id, placement))
    if answer.not_found:
        return False
    retry.call(objects.create_cluster_custom_object, GROUP, VERSION, BINDINGS, binding(run_id))
    return True


def remove_stale(api: client.ApiClient, active: set[str]) -> list[str]:
    """Delete the policies of runs no longer active (killed before their clean-up): left, a policy would go on
    placing every e2e namespace's pods by its run's OS. The run ids whose policy went."""
    listing: dict[str, Any] = {}
    with ignore_not_found():  # no MutatingAdmissionPolicy API: nothing can be left
        listing = retry.call(client.CustomObjectsApi(api).list_cluster_custom_object, GROUP, VERSION, POLICIES,
                             label_selector=RUN_ID_LABEL)
    stale = sorted({item["metadata"]["labels"][RUN_ID_LABEL] for item in listing.get("items", [])} - active)
    for run_id in stale:
        remove(api, run_id)
    return stale


def remove(api: client.ApiClient, run_id: str) -> None:
    """Delete the binding, then the policy (either may be gone already)."""
    objects = client.CustomObjectsApi(api)
    for plural in (BINDINGS, POLICIES):
        with ignore_not_found():
            retry.call(objects.delete_cluster_custom_object, GROUP, VERSION, plural, name_of(run_id))
