"""Container runtime versions as real nodes report them, read as upstream reads them (blang/semver)."""

from __future__ import annotations

import pytest
import semver

from winsuite.authoring.versions import CONTAINERD_1_7
from winsuite.authoring.versions import is_containerd_1_7_or_later
from winsuite.authoring.versions import parse_tolerant
from winsuite.authoring.versions import runtime_and_version


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
