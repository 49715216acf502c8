"""Version strings read in one place: Kubernetes and container runtimes as semver (blang's tolerant reading), Go's."""

from __future__ import annotations

import re

import semver
from packaging.version import InvalidVersion
from packaging.version import Version as PackagingVersion

# skipUnlessContainerdOneSevenOrGreater's bound: pre-releases of 1.7 count as 1.7.
CONTAINERD_1_7 = semver.Version(1, 7, 0, prerelease="alpha.1")
_COMPARATOR = re.compile(r"^\s*(>=|<=|>|<|==|=)?\s*(\S+)\s*$")


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


def is_release_tag(text: str) -> bool:
    """A Kubernetes release as `--version` prints it: "v" and a whole semver (v1.36.3, v1.37.0-alpha.1)."""
    return text.startswith("v") and semver.Version.is_valid(text[1:])


def minor_of(text: str) -> tuple[int, int] | None:
    """(1, 36) of v1.36.3; None for what is not a version."""
    try:
        version = parse_tolerant(text)
    except ValueError:
        return None
    return version.major, version.minor


def staging_version(kubernetes_version: str) -> str:
    """Staging modules (k8s.io/api …) are tagged v0.X.Y for Kubernetes v1.X.Y. Raises ValueError."""
    version = parse_tolerant(kubernetes_version)
    if version.major != 1:
        raise ValueError(f"not a Kubernetes v1 version: {kubernetes_version}")
    return "v" + str(version.replace(major=0))


def in_range(version: str, constraint: str) -> bool:
    """'v1.36.3' against '>=1.31, <1.37': comma-separated comparators, all must hold, each at the precision it
    gives (v1.36.3 is <=1.36 and ==1.36). A bare version means ==. Raises ValueError for either unreadable."""
    have = parse_tolerant(version)
    for part in constraint.split(","):
        match = _COMPARATOR.match(part)
        want = _release(match.group(2)) if match else None
        if match is None or want is None:
            raise ValueError(f"not a version comparison: {part!r}")
        mine = (have.major, have.minor, have.patch)[: len(want)]
        holds = {">=": mine >= want, "<=": mine <= want, ">": mine > want, "<": mine < want}.get(
            match.group(1) or "==", mine == want)
        if not holds:
            return False
    return True


def _release(text: str) -> tuple[int, ...] | None:
    """(1, 31) of "1.31" or "v1.31", (1, 31, 2) of "1.31.2"; None for anything else."""
    try:
        version = PackagingVersion(text)
    except InvalidVersion:
        return None
    plain = version.epoch == 0 and not (version.pre or version.post or version.dev or version.local)
    return version.release if plain and len(version.release) in (2, 3) else None


def go_version(text: str) -> PackagingVersion:
    """Go's version from GOVERSION or a pin: "go1.23.4", "1.24rc1", "go1.22.5 X:nocoverageredesign". Raises
    ValueError (a development build's "devel …" is no version)."""
    word = (text.split() or [""])[0].removeprefix("go")
    try:
        return PackagingVersion(word)
    except InvalidVersion:
        raise ValueError(f"not a Go version: {text!r}") from None


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
