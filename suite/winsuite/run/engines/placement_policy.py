"""OS placement for upstream specs without a webhook: a MutatingAdmissionPolicy for the run's e2e namespaces.

Upstream specs do not place their pods by OS. For the run's duration, pods created in namespaces of upstream's e2e
framework get the placement native pods get (authoring/targeting.py): the target OS's nodeSelector, the Windows
taint's toleration, spec.os.name and the run's RuntimeClass (never on HostProcess pods), and a required node
affinity that keeps them off every simulated node (those with kwok's annotation, tainted or not), added to each
node selector term the pod has. Never a toleration of the simulated nodes' taint: a pod there would run nothing.
"""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client

from winsuite.authoring.targeting import NODE_NAME_FIELD
from winsuite.authoring.targeting import Placement
from winsuite.k8s import nodes as k8s_nodes
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
_REQUIRED = "object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
_TYPE = "Object.spec.affinity"  # the typed objects of a PodSpec's affinity, as CEL constructs them
MAX_TERMS = 4  # a pod's node selector terms the policy adds its exclusion to (upstream's pods have one at most)
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
    if placement.node_exclusions():
        parts.append(_exclusion_patch(placement))
    if placement.runtime_class:
        parts.append(f"(has(object.spec.runtimeClassName) || ({_HOST_PROCESS}) ? [] : [JSONPatch{{op: \"add\", "
                     f"path: \"/spec/runtimeClassName\", value: {_cel(placement.runtime_class)}}}])")
    return " + ".join(parts)


def _exclusion_patch(placement: Placement) -> str:
    """Required node affinity keeping the pod off the simulated nodes: added whole where the pod has none, else
    ANDed into each of its first MAX_TERMS node selector terms (each replaced by a typed copy: a list of typed
    objects as a patch's value panics the API server's CEL conversion); nothing where a term has it already (the
    policy may be invoked again)."""
    names = placement.simulated_nodes
    required_type = f"{_TYPE}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    term_type = f"{required_type}.nodeSelectorTerms"
    # One requirement per node: a node field requirement takes a single value.
    fields = (f"{_cel(list(names))}.map(n, {term_type}.matchFields{{key: {_cel(NODE_NAME_FIELD)}, "
              f"operator: \"NotIn\", values: [n]}})")
    required = f"{required_type}{{nodeSelectorTerms: [{term_type}{{matchFields: {fields}}}]}}"
    node_affinity = f"{_TYPE}.nodeAffinity{{requiredDuringSchedulingIgnoredDuringExecution: {required}}}"
    path = "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution"
    whole = (f"!has(object.spec.affinity) ? [JSONPatch{{op: \"add\", path: \"/spec/affinity\", value: "
             f"{_TYPE}{{nodeAffinity: {node_affinity}}}}}] : "
             f"!has(object.spec.affinity.nodeAffinity) ? [JSONPatch{{op: \"add\", "
             f"path: \"/spec/affinity/nodeAffinity\", value: {node_affinity}}}] : "
             f"!has({_REQUIRED}) ? [JSONPatch{{op: \"add\", path: \"{path}\", value: {required}}}]")
    terms = []
    for index in range(MAX_TERMS):
        term = f"{_REQUIRED}.nodeSelectorTerms[{index}]"
        placed = (f"has({term}.matchFields) && {term}.matchFields.exists(f, f.key == {_cel(NODE_NAME_FIELD)} && "
                  f"f.operator == \"NotIn\" && f.values == [{_cel(names[0])}])")
        merged = (f"{term_type}{{matchExpressions: has({term}.matchExpressions) ? {term}.matchExpressions : [], "
                  f"matchFields: (has({term}.matchFields) ? {term}.matchFields : []) + {fields}}}")
        terms.append(f"(size({_REQUIRED}.nodeSelectorTerms) <= {index} || {placed} ? [] : [JSONPatch{{op: "
                     f"\"replace\", path: \"{path}/nodeSelectorTerms/{index}\", value: {merged}}}])")
    return f"({whole} : {' + '.join(terms)})"


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


def simulated_nodes(api: client.ApiClient) -> list[str]:
    """The nodes kwok simulates (its annotation), tainted or not."""
    return [node.metadata.name for node in k8s_nodes.list_nodes(api) if k8s_nodes.is_simulated(node)]


def install(api: client.ApiClient, run_id: str, placement: Placement) -> bool:
    """Create the policy, keeping pods off the simulated nodes there are now, and its binding; False where the API
    server has no MutatingAdmissionPolicy."""
    objects = client.CustomObjectsApi(api)
    placement = placement.avoiding([*placement.simulated_nodes, *simulated_nodes(api)])
    with ignore_not_found() as answer:
        retry.call(objects.create_cluster_custom_object, GROUP, VERSION, POLICIES, policy(run_id, placement))
    if answer.not_found:
        return False
    retry.call(objects.create_cluster_custom_object, GROUP, VERSION, BINDINGS, binding(run_id))
    return True


def remove_stale(api: client.ApiClient, active: set[str]) -> list[str]:
    """Delete the policies of runs no longer active (killed before their clean-up): left, a policy would go on
    placing every e2e namespace's pods by its run's OS. The run ids whose policy went."""
    stale = sorted(placed_runs(api) - active)
    for run_id in stale:
        remove(api, run_id)
    return stale


def placed_runs(api: client.ApiClient) -> set[str]:
    """The run ids that hold a placement policy (none where the API server has no MutatingAdmissionPolicy)."""
    listing: dict[str, Any] = {}
    with ignore_not_found():
        listing = retry.call(client.CustomObjectsApi(api).list_cluster_custom_object, GROUP, VERSION, POLICIES,
                             label_selector=RUN_ID_LABEL)
    return {item["metadata"]["labels"][RUN_ID_LABEL] for item in listing.get("items", [])}


def remove(api: client.ApiClient, run_id: str) -> None:
    """Delete the binding, then the policy (either may be gone already)."""
    objects = client.CustomObjectsApi(api)
    for plural in (BINDINGS, POLICIES):
        with ignore_not_found():
            retry.call(objects.delete_cluster_custom_object, GROUP, VERSION, plural, name_of(run_id))
