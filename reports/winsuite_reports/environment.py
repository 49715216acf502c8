"""A build's environment as its metadata records it: the axes the grid shows as header rows (TestGrid's column
headers read the same flat keys of finished.json), and what changed along each between two builds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from winsuite_reports.model import Build


@dataclass(frozen=True, slots=True)
class Axis:
    """One recorded fact of a build's environment: the first of `keys` its metadata has."""

    label: str
    keys: tuple[str, ...]


# What winsuite records (docs/results.md, "The prow layout"); upstream builds have the Kubernetes axis (job-version).
# The keys are real nodes' facts: winsuite records what only simulated nodes report under `simulated-` keys, which no
# axis reads, so a header row never shows a simulated node's template as the environment a build ran in.
KUBERNETES = Axis("Kubernetes", ("kubernetes-version", "job-version", "revision"))
AXES = (
    KUBERNETES,
    Axis("Windows builds", ("windows-builds",)),
    Axis("Runtime", ("container-runtime",)),
    Axis("Runtime (Windows)", ("container-runtime-windows",)),
    Axis("Runtime (Linux)", ("container-runtime-linux",)),
    Axis("Kubelet (Windows)", ("kubelet-version-windows",)),
    Axis("Kubelet (Linux)", ("kubelet-version-linux",)),
    Axis("Windows isolation", ("windows-isolation",)),
    Axis("Test images", ("image-registries",)),
)
UNRECORDED = "—"


def value(build: Build, axis: Axis) -> str:
    """The build's value on the axis, UNRECORDED when its metadata does not say."""
    return build.meta(*axis.keys) or UNRECORDED


def recorded_axes(builds: Sequence[Build]) -> list[Axis]:
    """The axes at least one of the builds records (Kubernetes always: every grid has that header row)."""
    keys = set().union(*(build.metadata.keys() for build in builds))  # an axis no build names is not looked for
    return [axis for axis in AXES if axis is KUBERNETES or (
        not keys.isdisjoint(axis.keys) and any(build.meta(*axis.keys) for build in builds))]


@dataclass(frozen=True, slots=True)
class AxisChange:
    """An axis's value in two builds."""

    axis: Axis
    before: str
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


def changes(before: Build, after: Build) -> list[AxisChange]:
    """Every axis either build records, with its two values (changed or not)."""
    return [AxisChange(axis, value(before, axis), value(after, axis)) for axis in recorded_axes([before, after])]
