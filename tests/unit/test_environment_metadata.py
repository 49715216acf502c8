"""finished.json's environment keys from the discovered nodes: Windows builds with their revision, runtime and
kubelet per OS, Windows isolation where it is known; what only simulated nodes report under `simulated-` keys."""

from __future__ import annotations

import dataclasses

from winsuite.authoring.environment import environment_metadata
from winsuite.authoring.environment import image_registries
from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.facts import NodeFacts

LINUX = NodeFacts(name="linux-0", os="linux", windows_build=None, kubelet_version="v1.36.3",
                  container_runtime="containerd://1.7.24", os_image="Debian GNU/Linux 12 (bookworm)",
                  kernel_version="6.1.0", simulated=False, ready=True, unschedulable=False, taints=[], labels={},
                  allocatable={}, capacity={}, internal_ip="10.1.0.5", provider_id=None)
WS2022 = dataclasses.replace(LINUX, name="win-0", os="windows", windows_build="10.0.20348",
                             kernel_version="10.0.20348.2582", container_runtime="containerd://1.7.20",
                             os_image="Windows Server 2022 Datacenter", kubelet_version="v1.36.2")
WS2025 = dataclasses.replace(WS2022, name="win-1", windows_build="10.0.26100", kernel_version="10.0.26100.1742",
                             container_runtime="containerd://2.1.0")


def test_every_axis_is_recorded_per_os() -> None:
    assert environment_metadata([LINUX, WS2022, WS2025], None, "windows") == {
        "windows-builds": "10.0.20348.2582,10.0.26100.1742",
        "container-runtime": "containerd://1.7.20,containerd://2.1.0",  # the target OS's
        "container-runtime-linux": "containerd://1.7.24",
        "kubelet-version-linux": "v1.36.3",
        "container-runtime-windows": "containerd://1.7.20,containerd://2.1.0",
        "kubelet-version-windows": "v1.36.2",
        "windows-isolation": "process",
    }


def test_a_kernel_version_without_a_revision_leaves_the_build() -> None:
    node = dataclasses.replace(WS2022, kernel_version="10.0 20348 (WinBuild.160101.0800)")
    assert environment_metadata([node], None, "windows")["windows-builds"] == "10.0.20348"


def test_isolation_is_hyperv_through_its_runtime_class_and_unknown_on_simulated_nodes() -> None:
    assert environment_metadata([WS2022], "runhcs-wcow-hypervisor", "windows")["windows-isolation"] == (
        "hyperv (runhcs-wcow-hypervisor)")
    assert environment_metadata([WS2022], "gvisor", "windows")["windows-isolation"] == "runtimeclass gvisor"
    simulated = dataclasses.replace(WS2022, simulated=True)
    assert "windows-isolation" not in environment_metadata([simulated], None, "windows")
    assert "windows-isolation" not in environment_metadata([WS2022], None, "linux")


def test_what_only_simulated_nodes_report_is_published_as_simulated() -> None:
    """kwok's nodes report their template's kernel, runtime and kubelet: no plain key may carry them."""
    simulated = [dataclasses.replace(node, simulated=True) for node in (LINUX, WS2022, WS2025)]
    metadata = environment_metadata(simulated, None, "windows")
    assert metadata == {
        "simulated-windows-builds": "10.0.20348.2582,10.0.26100.1742",
        "simulated-container-runtime": "containerd://1.7.20,containerd://2.1.0",
        "simulated-container-runtime-linux": "containerd://1.7.24",
        "simulated-kubelet-version-linux": "v1.36.3",
        "simulated-container-runtime-windows": "containerd://1.7.20,containerd://2.1.0",
        "simulated-kubelet-version-windows": "v1.36.2",
    }


def test_where_real_nodes_report_a_fact_only_their_values_are_published() -> None:
    simulated = dataclasses.replace(WS2025, name="win-sim-0", simulated=True, kubelet_version="v1.36.3")
    assert environment_metadata([LINUX, WS2022, simulated], None, "windows") == {
        "windows-builds": "10.0.20348.2582",
        "container-runtime": "containerd://1.7.20",
        "container-runtime-linux": "containerd://1.7.24",
        "kubelet-version-linux": "v1.36.3",
        "container-runtime-windows": "containerd://1.7.20",
        "kubelet-version-windows": "v1.36.2",
        "windows-isolation": "process",
    }


def test_the_cluster_facts_metadata_carries_them() -> None:
    facts = ClusterFacts(server="https://127.0.0.1:6443", server_version="v1.36.3", nodes=[LINUX, WS2022],
                         cluster_dns=True, metrics_api=False, runtime_classes=[], egress_allowed=False, warnings=[])
    metadata = facts.metadata("windows")
    assert metadata["windows-builds"] == "10.0.20348.2582"
    assert metadata["container-runtime"] == "containerd://1.7.20"  # the target OS's, as before
    assert metadata["container-runtime-linux"] == "containerd://1.7.24"


def test_image_registries_name_what_the_repo_list_changed() -> None:
    defaults = {"e2eRegistry": "registry.k8s.io/e2e-test-images", "gcRegistry": "registry.k8s.io"}
    assert image_registries(dict(defaults), defaults) == "defaults"
    changed = {**defaults, "e2eRegistry": "mcr.example/e2e"}
    assert image_registries(changed, defaults) == "e2eRegistry=mcr.example/e2e"
