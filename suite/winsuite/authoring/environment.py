"""The environment a build ran in, as flat finished.json metadata (TestGrid can use each key as a column header):
Windows builds with their update revision, container runtime and kubelet versions per OS, Windows isolation; what only
simulated nodes report kept apart from what real ones do."""

from __future__ import annotations

import operator
from collections.abc import Callable
from collections.abc import Sequence
from typing import Protocol

HYPERV_RUNTIME_CLASSES = frozenset({"runhcs-wcow-hypervisor"})  # what upstream's Hyper-V jobs name theirs
NODE_OSES = ("linux", "windows")
# The metadata key of a fact only simulated nodes report: `simulated-windows-builds`, never `windows-builds`.
SIMULATED_PREFIX = "simulated-"


class Node(Protocol):
    """What this module reads of a node's facts."""

    @property
    def os(self) -> str: ...
    @property
    def windows_build(self) -> str | None: ...
    @property
    def kernel_version(self) -> str: ...
    @property
    def kubelet_version(self) -> str: ...
    @property
    def container_runtime(self) -> str: ...
    @property
    def simulated(self) -> bool: ...


def windows_revision(node: Node) -> str:
    """The node's Windows build with its update revision: a Windows node's kernelVersion is
    major.minor.build.revision (10.0.20348.2582); the build alone where the revision is unknown."""
    build = node.windows_build or ""
    kernel = node.kernel_version.strip()
    if kernel.count(".") == 3 and (not build or kernel.startswith(build + ".")):
        return kernel
    return build


def environment_metadata(nodes: Sequence[Node], runtime_class: str | None, target_os: str) -> dict[str, str]:
    """The environment keys of finished.json's metadata (a key is left out when nothing is known of it).

    A plain key holds what real nodes report, never a simulated node's: kwok's nodes report the facts of their
    template (a kernel, runtime and kubelet nothing ran on). A fact that only simulated nodes report is published
    under its key prefixed SIMULATED_PREFIX; where real nodes report it too, the simulated nodes' values are left
    out."""
    metadata: dict[str, str] = {}
    runtime, kubelet = operator.attrgetter("container_runtime"), operator.attrgetter("kubelet_version")
    facts: list[tuple[str, str, Callable[[Node], str]]] = [
        ("windows-builds", "windows", windows_revision),
        ("container-runtime", target_os, runtime),  # the target OS's, beside the per-OS keys
        *((f"{key}-{os_name}", os_name, fact) for os_name in NODE_OSES
          for key, fact in (("container-runtime", runtime), ("kubelet-version", kubelet))),
    ]
    for key, os_name, fact in facts:
        of_os = [n for n in nodes if n.os == os_name]
        real = {fact(n) for n in of_os if not n.simulated} - {""}
        simulated = {fact(n) for n in of_os if n.simulated} - {""}
        if real or simulated:
            metadata[key if real else SIMULATED_PREFIX + key] = ",".join(sorted(real or simulated))
    isolation = windows_isolation(nodes, runtime_class) if target_os == "windows" else ""
    if isolation:
        metadata["windows-isolation"] = isolation
    return metadata


def windows_isolation(nodes: Sequence[Node], runtime_class: str | None) -> str:
    """How the run's Windows containers were isolated, where that is known: Hyper-V through a Hyper-V RuntimeClass,
    another RuntimeClass by its name, else process isolation (the default) on real Windows nodes; nothing runs on
    simulated ones, so there it is unknown ("")."""
    if runtime_class:
        hyperv = runtime_class in HYPERV_RUNTIME_CLASSES
        return f"hyperv ({runtime_class})" if hyperv else f"runtimeclass {runtime_class}"
    if any(n.os == "windows" and not n.simulated for n in nodes):
        return "process"
    return ""


def image_registries(registries: dict[str, str], defaults: dict[str, str]) -> str:
    """The test images' registries as the run's repo list set them: its keys that differ from upstream's defaults
    (key=registry, sorted), or "defaults"."""
    changed = [f"{key}={registry}" for key, registry in sorted(registries.items()) if defaults.get(key) != registry]
    return ",".join(changed) or "defaults"
