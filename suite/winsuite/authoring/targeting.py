"""Places any pod spec on the target OS: nodeSelector, tolerations, runtimeClassName and spec.os, and keeps it off
the cluster's simulated nodes by name (kwok's taint may be missing: kwok manages any node with its annotation)."""

from __future__ import annotations

import copy
import dataclasses
import enum
from collections.abc import Iterable
from typing import Any

OS_LABEL = "kubernetes.io/os"


class NodeOS(enum.StrEnum):
    """A node's operating system, as its kubernetes.io/os label and a pod's spec.os.name say it."""

    WINDOWS = "windows"
    LINUX = "linux"


WINDOWS_BUILD_LABEL = "node.kubernetes.io/windows-build"
# kwok's simulated nodes carry this taint so that only scheduling/admission tests land on them; nodes other tools
# make (`kwokctl scale node`) have the annotation only, which no selector can read: placement names them instead.
SIMULATED_NODE_TAINT_KEY = "kwok.x-k8s.io/node"
SIMULATED_NODE_ANNOTATION = "kwok.x-k8s.io/node"
NODE_NAME_FIELD = "metadata.name"


@dataclasses.dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str

    def toleration(self) -> dict[str, str]:
        return {"key": self.key, "operator": "Equal", "value": self.value, "effect": self.effect}


DEFAULT_WINDOWS_TAINT = Taint("os", "windows", "NoSchedule")
SIMULATED_NODE_TAINT = Taint(SIMULATED_NODE_TAINT_KEY, "fake", "NoSchedule")


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where a run's pods go: the target OS and how its nodes are told apart."""

    target_os: str = "windows"
    windows_build: str | None = None  # pin a build when the image or test needs one
    windows_taint: Taint | None = DEFAULT_WINDOWS_TAINT
    runtime_class: str | None = None
    # Only scheduling and admission tests set this: a pod on a simulated node runs nothing.
    tolerate_simulated_nodes: bool = False
    # The cluster's simulated nodes, kept out by a required node affinity unless they are tolerated.
    simulated_nodes: tuple[str, ...] = ()

    def with_build(self, build: str | None) -> Placement:
        return dataclasses.replace(self, windows_build=build)

    def avoiding(self, simulated_nodes: Iterable[str]) -> Placement:
        return dataclasses.replace(self, simulated_nodes=tuple(sorted(set(simulated_nodes))))

    def for_scheduling_only(self) -> Placement:
        return dataclasses.replace(self, tolerate_simulated_nodes=True)

    def node_selector(self) -> dict[str, str]:
        selector = {OS_LABEL: self.target_os}
        if self.target_os == NodeOS.WINDOWS and self.windows_build:
            selector[WINDOWS_BUILD_LABEL] = self.windows_build
        return selector

    def tolerations(self) -> list[dict[str, str]]:
        tolerations = []
        if self.target_os == NodeOS.WINDOWS and self.windows_taint is not None:
            tolerations.append(self.windows_taint.toleration())
        if self.tolerate_simulated_nodes:
            tolerations.append(SIMULATED_NODE_TAINT.toleration())
        return tolerations

    def node_exclusions(self) -> list[dict[str, Any]]:
        """The node field requirements that keep pods off the simulated nodes, one per node (the API allows a field
        requirement one value); none when they are tolerated."""
        if self.tolerate_simulated_nodes:
            return []
        return [{"key": NODE_NAME_FIELD, "operator": "NotIn", "values": [name]} for name in self.simulated_nodes]


def is_host_process(spec: dict[str, Any]) -> bool:
    """The PodSpec (as a dict) asks for HostProcess containers, at pod level or in any container."""
    def host_process(security: dict[str, Any] | None) -> bool:
        return bool(((security or {}).get("windowsOptions") or {}).get("hostProcess"))

    every = [*spec.get("initContainers", []), *spec.get("containers", []), *spec.get("ephemeralContainers", [])]
    return host_process(spec.get("securityContext")) or any(host_process(c.get("securityContext")) for c in every)


def place_pod_spec(spec: dict[str, Any], placement: Placement) -> dict[str, Any]:
    """A copy of `spec` (a PodSpec as a dict) that lands on the target OS; existing settings are kept."""
    placed = copy.deepcopy(spec)
    placed["nodeSelector"] = {**placement.node_selector(), **placed.get("nodeSelector", {})}
    tolerations = list(placed.get("tolerations", []))
    tolerations += [t for t in placement.tolerations() if t not in tolerations]
    if tolerations:
        placed["tolerations"] = tolerations
    # A HostProcess pod runs on the host, outside any sandbox: upstream never gives one a runtime class, and
    # with a Hyper-V class it would not start.
    if placement.runtime_class and "runtimeClassName" not in placed and not is_host_process(placed):
        placed["runtimeClassName"] = placement.runtime_class
    placed.setdefault("os", {"name": placement.target_os})
    exclusions = placement.node_exclusions()
    if exclusions:
        _require_in_every_term(placed, exclusions)
    return placed


def _require_in_every_term(spec: dict[str, Any], requirements: list[dict[str, Any]]) -> None:
    """Add field requirements to each of the spec's required node selector terms (terms are ORed, a term's
    requirements ANDed), keeping any node or pod affinity the spec has."""
    affinity = spec.setdefault("affinity", {})
    required = affinity.setdefault("nodeAffinity", {}).setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = required.get("nodeSelectorTerms") or [{}]
    required["nodeSelectorTerms"] = [
        {**term, "matchFields": [*fields, *(r for r in requirements if r not in fields)]}
        for term in terms for fields in [term.get("matchFields", [])]]


def place_pod(obj: dict[str, Any], placement: Placement) -> dict[str, Any]:
    """A copy of a Pod, or of a workload with a pod template (Deployment, Job, CronJob …), placed on the target OS."""
    placed = copy.deepcopy(obj)
    holder = placed
    if "jobTemplate" in holder["spec"]:  # CronJob: spec.jobTemplate.spec.template
        holder = holder["spec"]["jobTemplate"]
    if "template" in holder["spec"]:
        holder = holder["spec"]["template"]
    holder["spec"] = place_pod_spec(holder["spec"], placement)
    return placed
