"""Wrapper go.mod generation: staging modules pinned to their v0.X.Y tags, go/godebug kept, version stamps."""

from __future__ import annotations

import pytest

from winsuite.components.gomodule import parse_mod
from winsuite.components.gomodule import render_wrapper
from winsuite.components.gomodule import version_ldflags

KUBERNETES_MOD = """\
// This is a generated file. Do not edit directly.

module k8s.io/kubernetes

go 1.26.0

godebug default=go1.26

require (
\tgithub.com/spf13/cobra v1.10.0
\tk8s.io/api v0.0.0
\tk8s.io/cri-streaming v0.0.0
\tk8s.io/klog/v2 v2.130.1
)

require (
\tk8s.io/sample-cli-plugin v0.0.0 // indirect
)

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
)
"""


def test_staging_requirements_are_the_v0_0_0_ones() -> None:
    mod = parse_mod(KUBERNETES_MOD)

    assert mod.staging == ("k8s.io/api", "k8s.io/cri-streaming", "k8s.io/sample-cli-plugin")
    assert mod.go == "1.26.0"
    assert mod.godebug == ("default=go1.26",)


def test_godebug_block_is_read() -> None:
    assert parse_mod("module m\n\ngo 1.24\n\ngodebug (\n\tx509sha1=1\n\twinsymlink=0\n)\n").godebug == (
        "x509sha1=1",
        "winsymlink=0",
    )


def test_a_go_mod_without_go_directive_is_refused() -> None:
    with pytest.raises(ValueError, match="no go directive"):
        parse_mod("module m\n")


def test_wrapper_requires_kubernetes_and_replaces_each_staging_module() -> None:
    wrapper = render_wrapper(
        "winsuite.local/build/kubernetes", "k8s.io/kubernetes", "v1.36.3", parse_mod(KUBERNETES_MOD)
    )

    assert wrapper == (
        "module winsuite.local/build/kubernetes\n\n"
        "go 1.26.0\n\n"
        "godebug default=go1.26\n\n"
        "require k8s.io/kubernetes v1.36.3\n\n"
        "replace (\n"
        "\tk8s.io/api => k8s.io/api v0.36.3\n"
        "\tk8s.io/cri-streaming => k8s.io/cri-streaming v0.36.3\n"
        "\tk8s.io/sample-cli-plugin => k8s.io/sample-cli-plugin v0.36.3\n"
        ")\n"
    )


def test_a_module_without_staging_modules_gets_no_replace_block() -> None:
    wrapper = render_wrapper("w", "go.etcd.io/etcd/server/v3", "v3.6.8", parse_mod("module x\n\ngo 1.24.0\n"))

    assert "replace" not in wrapper
    assert "require go.etcd.io/etcd/server/v3 v3.6.8" in wrapper


def test_version_stamps_set_both_version_packages() -> None:
    flags = version_ldflags("v1.36.3")

    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        assert f"-X {package}.gitVersion=v1.36.3" in flags
        assert f"-X {package}.gitMajor=1" in flags
        assert f"-X {package}.gitMinor=36" in flags
        assert f"-X {package}.gitTreeState=clean" in flags
