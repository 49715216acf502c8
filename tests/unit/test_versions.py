"""Version strings: container runtimes as real nodes report them (blang/semver), Kubernetes ranges, Go."""

from __future__ import annotations

import pytest
import semver

from winsuite import versions
from winsuite.versions import CONTAINERD_1_7
from winsuite.versions import is_containerd_1_7_or_later
from winsuite.versions import parse_tolerant
from winsuite.versions import runtime_and_version


@pytest.mark.parametrize(("reported", "runtime", "version"), [
    ("containerd://1.7.13", "containerd", "1.7.13"),
    ("containerd://v1.7.0", "containerd", "1.7.0"),  # Windows builds from the containerd repo say v…
    ("containerd://1.7", "containerd", "1.7.0"),
    ("containerd://2", "containerd", "2.0.0"),
    ("containerd://1.7.0-rc.1", "containerd", "1.7.0-rc.1"),
    ("containerd://1.6.21-1", "containerd", "1.6.21-1"),  # distribution builds
    ("containerd://1.7.20+azure-1", "containerd", "1.7.20+azure-1"),
    ("containerd://01.07.03", "containerd", "1.7.3"),
    ("docker://24.0.7", "docker", "24.0.7"),
    ("cri-o://1.30.2", "cri-o", "1.30.2"),
])
def test_runtime_versions_real_nodes_report(reported: str, runtime: str, version: str) -> None:
    assert runtime_and_version(reported) == (runtime, semver.Version.parse(version))


@pytest.mark.parametrize("reported", ["containerd", "containerd://", "containerd://1.7-rc.1", "containerd://x.y",
                                      "unknown", "containerd://1.7.0://x"])
def test_unreadable_versions_are_refused(reported: str) -> None:
    with pytest.raises(ValueError):
        runtime_and_version(reported)


@pytest.mark.parametrize(("reported", "expected"), [
    ("containerd://1.7.0", True),
    ("containerd://1.7.0-beta.0", True),  # upstream's bound is 1.7.0-alpha.1: pre-releases of 1.7 run
    ("containerd://1.7.0-alpha.1", True),
    ("containerd://1.7.0-alpha.0", False),
    ("containerd://1.7", True),
    ("containerd://2.1.4", True),
    ("containerd://1.6.28", False),
    ("containerd://v1.6.99", False),
    ("docker://25.0.0", False),
    ("garbage", False),
])
def test_containerd_1_7_bound(reported: str, expected: bool) -> None:
    assert is_containerd_1_7_or_later(reported) is expected


def test_semver_ordering_puts_pre_releases_before_the_release() -> None:
    assert parse_tolerant("1.7.0-rc.2") < parse_tolerant("1.7.0") < parse_tolerant("1.7.1")
    assert parse_tolerant("1.7.0-rc.2") > CONTAINERD_1_7


@pytest.mark.parametrize(
    ("version", "constraint", "inside"),
    [
        ("v1.36.3", ">=1.31, <1.37", True),
        ("v1.36.3", ">=1.37", False),
        ("v1.36.3", "<1.36", False),
        ("v1.36.3", "<=1.36", True),  # compared at the constraint's precision
        ("v1.36.3", ">1.36", False),
        ("v1.36.3", "1.36", True),
        ("v1.36.3", "==1.36.2", False),
        ("v1.36.3", "=v1.36.3", True),
        ("1.36.0-alpha.1", ">=1.36", True),
        ("v1.9.0", "<1.10", True),  # numeric, not textual
    ],
)
def test_version_ranges(version: str, constraint: str, inside: bool) -> None:
    assert versions.in_range(version, constraint) is inside


@pytest.mark.parametrize("constraint", ["newest", ">= 1", "~1.36", "1.36, latest"])
def test_invalid_version_range_is_refused(constraint: str) -> None:
    with pytest.raises(ValueError):
        versions.in_range("v1.36.3", constraint)


@pytest.mark.parametrize(("text", "minor"), [
    ("v1.36.3", (1, 36)), ("1.37.0-alpha.1", (1, 37)), ("v1.30.5-gke.1014001", (1, 30)), ("v1.36", (1, 36)),
    ("unknown", None), ("", None), ("names.txt", None),
])
def test_minor_of(text: str, minor: tuple[int, int] | None) -> None:
    assert versions.minor_of(text) == minor


def test_staging_version_follows_the_kubernetes_minor_and_patch() -> None:
    assert versions.staging_version("v1.36.3") == "v0.36.3"
    assert versions.staging_version("v1.37.0-rc.1") == "v0.37.0-rc.1"
    with pytest.raises(ValueError, match="not a Kubernetes v1 version"):
        versions.staging_version("v2.0.0")


@pytest.mark.parametrize(("text", "is_tag"), [
    ("v1.36.3", True), ("v1.37.0-alpha.3.123+0123abcd", True), ("1.36.3", False), ("v1.36", False), ("", False),
])
def test_release_tags_are_whole_semvers_with_a_v(text: str, is_tag: bool) -> None:
    assert versions.is_release_tag(text) is is_tag


def test_go_versions_order_as_go_releases() -> None:
    assert versions.go_version("go1.22.5 X:nocoverageredesign") < versions.go_version("1.23rc1")
    assert versions.go_version("1.23rc1") < versions.go_version("go1.23.0") == versions.go_version("1.23")
    assert versions.go_version("1.9") < versions.go_version("1.10")  # numeric, not textual
    with pytest.raises(ValueError, match="not a Go version"):
        versions.go_version("devel go1.24-abcdef")
