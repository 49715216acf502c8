"""Container runtime versions read as upstream reads them (blang/semver's ParseTolerant, semver ordering)."""

from __future__ import annotations

import semver

# skipUnlessContainerdOneSevenOrGreater's bound: pre-releases of 1.7 count as 1.7.
CONTAINERD_1_7 = semver.Version(1, 7, 0, prerelease="alpha.1")


def _drop_leading_zeros(part: str) -> str:
    if len(part) <= 1:
        return part
    trimmed = part.lstrip("0")
    return trimmed if trimmed[:1].isdigit() else "0" + trimmed


def parse_tolerant(text: str) -> semver.Version:
    """ParseTolerant: spaces and a leading "v" dropped, leading zeros of a part dropped, a missing minor or
    patch is 0 (a short version with pre-release or build data is refused). Raises ValueError."""
    parts = [_drop_leading_zeros(p) for p in text.strip().removeprefix("v").split(".", 2)]
    if len(parts) < 3 and any(c in parts[-1] for c in "+-"):
        raise ValueError(f"short version cannot contain pre-release or build data: {text!r}")
    return semver.Version.parse(".".join(parts + ["0"] * (3 - len(parts))))


def runtime_and_version(reported: str) -> tuple[str, semver.Version]:
    """getNodeContainerRuntimeAndVersion: ("containerd", 1.7.13) from "containerd://1.7.13". Raises ValueError
    when the text is not "<runtime>://<version>"."""
    name, separator, version = reported.partition("://")
    if not separator or "://" in version:
        raise ValueError(f"could not get container runtime and version from {reported!r}")
    return name, parse_tolerant(version)


def is_containerd_1_7_or_later(reported: str) -> bool:
    """The runtime is containerd, version 1.7.0-alpha.1 or later (False when the text cannot be read)."""
    try:
        name, version = runtime_and_version(reported)
    except ValueError:
        return False
    return name.lower() == "containerd" and version >= CONTAINERD_1_7
