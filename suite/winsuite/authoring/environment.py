"""The environment a build ran in, as flat finished.json metadata (TestGrid can use each key as a column header):
Windows builds with their update revision, container runtime and kubelet versions per OS, Windows isolation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

HYPERV_RUNTIME_CLASSES = frozenset({"runhcs-wcow-hypervisor"})  # what upstream's Hyper-V jobs name theirs
NODE_OSES = ("linux", "windows")


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
    """The environment keys of finished.json's metadata (a key is left out when nothing is known of it)."""
    metadata: dict[str, str] = {}
    revisions = sorted({windows_revision(n) for n in nodes if n.os == "windows"} - {""})
    if revisions:
        metadata["windows-builds"] = ",".join(revisions)
    for os_name in NODE_OSES:
        of_os = [n for n in nodes if n.os == os_name]
        for key, values in (("container-runtime", {n.container_runtime for n in of_os}),
                            ("kubelet-version", {n.kubelet_version for n in of_os})):
            if values - {""}:
                metadata[f"{key}-{os_name}"] = ",".join(sorted(values - {""}))
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
