"""What a test sees of its run: the cluster (`ClusterSession`) and the target OS (`Target`: images and placement)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any
from typing import Protocol

from kubernetes import client

from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.naming import Spec
from winsuite.authoring.targeting import Placement
from winsuite.authoring.targeting import place_pod


class ImageResolver(Protocol):
    def __call__(self, image_id: str, *, target_os: str, windows_build: str | None) -> str:
        """The image reference of `image_id` for this run's repo list, target OS and Windows build."""


@dataclasses.dataclass(frozen=True)
class ClusterSession:
    """The run's cluster as tests know it: the API client, the discovered facts, the run's placement."""

    api: client.ApiClient
    facts: ClusterFacts
    placement: Placement
    run_id: str
    kubeconfig: Path
    context: str | None

    @property
    def target_os(self) -> str:
        return self.placement.target_os


@dataclasses.dataclass(frozen=True)
class Target:
    """What a test needs to be OS-agnostic: images and placement for the run's target OS. Its placement always
    keeps pods off the cluster's simulated nodes (unless it tolerates them), whether or not they carry kwok's
    taint: a pod there would run nothing and report Running."""

    facts: ClusterFacts
    spec: Spec
    placement: Placement
    resolve_image: ImageResolver

    def __post_init__(self) -> None:
        simulated = [*self.placement.simulated_nodes, *self.facts.simulated_nodes()]
        object.__setattr__(self, "placement", self.placement.avoiding(simulated))

    @property
    def os(self) -> str:
        return self.placement.target_os

    def image(self, image_id: str, os: str | None = None) -> str:
        """The image reference for this run (or for `os`); the test must declare the image in images=."""
        if image_id not in self.spec.images and image_id != "pause":
            raise AssertionError(f"{self.spec.location}: uses image {image_id!r} without declaring it in images=")
        os = os or self.os
        build = self.placement.windows_build if os == self.os else None
        return self.resolve_image(image_id, target_os=os, windows_build=build)

    def place(self, obj: dict[str, Any]) -> dict[str, Any]:
        """A Pod or workload manifest placed on the target OS (selector, tolerations, spec.os, runtime class)."""
        return place_pod(obj, self.placement)

    def placed(self, placement: Placement) -> Target:
        """The same test's target with another placement (tests that place pods on another OS or build)."""
        return dataclasses.replace(self, placement=placement)

    def scheduling_only(self) -> Target:
        """For scheduling/admission tests only: may land on simulated nodes, which run nothing."""
        return self.placed(self.placement.for_scheduling_only())
