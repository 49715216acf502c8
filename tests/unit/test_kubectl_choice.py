"""Which kubectl the tests use: PATH's within one minor of the server (kubectl's skew policy), else the pinned one."""

from __future__ import annotations

from pathlib import Path

import pytest

from winsuite.cluster.kubectl import choose
from winsuite.cluster.kubectl import client_version
from winsuite.cluster.kubectl import pinned_kubectl
from winsuite.inputs.pins import load_pins

PINNED = Path("/cache/bin/kubernetes-v1.36.3/kubectl")


@pytest.mark.parametrize("version", ["v1.36.0", "v1.35.9", "v1.37.1"])
def test_a_kubectl_on_path_within_one_minor_is_used(version: str) -> None:
    assert choose("v1.36.3", "/usr/bin/kubectl", version, PINNED).path == "/usr/bin/kubectl"


@pytest.mark.parametrize("version", ["v1.34.2", "v1.38.0", None])
def test_a_kubectl_on_path_out_of_skew_is_passed_over_for_the_pinned_one_with_a_warning(version: str | None) -> None:
    choice = choose("v1.36.3", "/usr/bin/kubectl", version, PINNED)

    assert choice.path == str(PINNED)
    assert "/usr/bin/kubectl" in choice.warning and "kube-apiserver v1.36.3" in choice.warning


def test_without_kubectl_on_path_the_pinned_one_is_used_and_without_either_none() -> None:
    assert choose("v1.36.3", None, None, PINNED).path == str(PINNED)
    assert choose("v1.36.3", None, None, None).path == ""
    assert choose("v1.36.3", "/usr/bin/kubectl", "v1.20.0", None).path == "/usr/bin/kubectl"  # nothing better


def test_the_pinned_kubectl_reports_the_pinned_version() -> None:
    pinned = pinned_kubectl()
    if pinned is None:
        pytest.skip("needs the pinned kubectl (`winsuite cluster build`)")
    assert client_version(str(pinned)) == load_pins().kubernetes
