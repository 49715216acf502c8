"""winsuite.authoring.targeting: any pod spec lands on the target OS (nodeSelector,
tolerations, runtimeClass, spec.os)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from winsuite.authoring.targeting import OS_LABEL
from winsuite.authoring.targeting import WINDOWS_BUILD_LABEL
from winsuite.authoring.targeting import Placement
from winsuite.authoring.targeting import Taint
from winsuite.authoring.targeting import place_pod
from winsuite.authoring.targeting import place_pod_spec
from winsuite.k8s import netexec

WINDOWS_TOLERATION = {"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}
SIMULATED_TOLERATION = {"key": "kwok.x-k8s.io/node", "operator": "Equal", "value": "fake", "effect": "NoSchedule"}
CONTAINERS = [{"name": "c", "image": "agnhost"}]


@pytest.mark.parametrize(
    ("placement", "selector"),
    [
        (Placement(), {OS_LABEL: "windows"}),
        (Placement().with_build("10.0.20348"), {OS_LABEL: "windows", WINDOWS_BUILD_LABEL: "10.0.20348"}),
        (Placement(target_os="linux"), {OS_LABEL: "linux"}),
        (Placement(target_os="linux", windows_build="10.0.20348"), {OS_LABEL: "linux"}),  # a build is Windows-only
    ],
)
def test_node_selector_names_the_os_and_the_windows_build(placement: Placement, selector: dict[str, str]) -> None:
    assert place_pod_spec({"containers": CONTAINERS}, placement)["nodeSelector"] == selector


@pytest.mark.parametrize(
    ("placement", "tolerations"),
    [
        (Placement(), [WINDOWS_TOLERATION]),
        (Placement(windows_taint=Taint("node.kubernetes.io/os", "win", "NoExecute")),
         [{"key": "node.kubernetes.io/os", "operator": "Equal", "value": "win", "effect": "NoExecute"}]),
        (Placement(windows_taint=None), None),
        (Placement(target_os="linux"), None),
        (Placement().for_scheduling_only(), [WINDOWS_TOLERATION, SIMULATED_TOLERATION]),
        (Placement(target_os="linux").for_scheduling_only(), [SIMULATED_TOLERATION]),
    ],
)
def test_tolerations_cover_the_windows_taint_and_simulated_nodes_only_when_asked(
    placement: Placement, tolerations: list[dict[str, str]] | None
) -> None:
    assert place_pod_spec({"containers": CONTAINERS}, placement).get("tolerations") == tolerations


@pytest.mark.parametrize(
    ("runtime_class", "spec_value", "expected"),
    [(None, None, None), ("runhcs-wcow-hypervisor", None, "runhcs-wcow-hypervisor"),
     ("runhcs-wcow-hypervisor", "mine", "mine")],
)
def test_runtime_class_is_set_when_the_job_names_one(
    runtime_class: str | None, spec_value: str | None, expected: str | None
) -> None:
    spec: dict[str, Any] = {"containers": CONTAINERS}
    if spec_value:
        spec["runtimeClassName"] = spec_value
    assert place_pod_spec(spec, Placement(runtime_class=runtime_class)).get("runtimeClassName") == expected


HOST_PROCESS = {"windowsOptions": {"hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}}


@pytest.mark.parametrize("spec", [
    {"containers": CONTAINERS, "securityContext": HOST_PROCESS, "hostNetwork": True},
    {"containers": [{**CONTAINERS[0], "securityContext": HOST_PROCESS}], "hostNetwork": True},
    {"containers": CONTAINERS, "initContainers": [{**CONTAINERS[0], "securityContext": HOST_PROCESS}]},
], ids=["pod-level", "container-level", "init-container"])
def test_host_process_pods_get_no_runtime_class(spec: dict[str, Any]) -> None:
    placed = place_pod_spec(spec, Placement(runtime_class="runhcs-wcow-hypervisor"))
    assert "runtimeClassName" not in placed
    assert placed["os"] == {"name": "windows"} and placed["nodeSelector"] == {OS_LABEL: "windows"}


def test_a_pod_with_host_process_false_keeps_the_runtime_class() -> None:
    spec = {"containers": CONTAINERS, "securityContext": {"windowsOptions": {"hostProcess": False}}}
    assert place_pod_spec(spec, Placement(runtime_class="rc"))["runtimeClassName"] == "rc"


@pytest.mark.parametrize("target_os", ["windows", "linux"])
def test_spec_os_names_the_target(target_os: str) -> None:
    assert place_pod_spec({"containers": CONTAINERS}, Placement(target_os=target_os))["os"] == {"name": target_os}


def test_existing_settings_are_kept() -> None:
    spec = {
        "containers": CONTAINERS,
        "nodeSelector": {"disktype": "ssd", OS_LABEL: "linux"},
        "tolerations": [WINDOWS_TOLERATION, {"key": "gpu", "operator": "Exists"}],
        "os": {"name": "linux"},
    }
    placed = place_pod_spec(spec, Placement().with_build("10.0.17763"))
    assert placed["nodeSelector"] == {OS_LABEL: "linux", WINDOWS_BUILD_LABEL: "10.0.17763", "disktype": "ssd"}
    assert placed["tolerations"] == [WINDOWS_TOLERATION, {"key": "gpu", "operator": "Exists"}]  # no duplicate
    assert placed["os"] == {"name": "linux"}
    assert placed["containers"] == CONTAINERS


def pod_spec() -> dict[str, Any]:
    return {"containers": copy.deepcopy(CONTAINERS)}


WORKLOADS: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "Pod": ({"kind": "Pod", "metadata": {"name": "p"}, "spec": pod_spec()}, ("spec",)),
    "Deployment": ({"kind": "Deployment", "spec": {"replicas": 2, "template": {"spec": pod_spec()}}},
                   ("spec", "template", "spec")),
    "Job": ({"kind": "Job", "spec": {"template": {"spec": pod_spec()}}}, ("spec", "template", "spec")),
    "CronJob": ({"kind": "CronJob", "spec": {"schedule": "* * * * *",
                                             "jobTemplate": {"spec": {"template": {"spec": pod_spec()}}}}},
                ("spec", "jobTemplate", "spec", "template", "spec")),
}


def dig(obj: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    for key in path:
        obj = obj[key]
    return obj


@pytest.mark.parametrize("kind", list(WORKLOADS))
def test_workloads_are_placed_through_their_pod_template(kind: str) -> None:
    obj, path = WORKLOADS[kind]
    before = copy.deepcopy(obj)
    placed = place_pod(obj, Placement())
    spec = dig(placed, path)
    assert spec["nodeSelector"] == {OS_LABEL: "windows"}
    assert spec["tolerations"] == [WINDOWS_TOLERATION]
    assert spec["os"] == {"name": "windows"}
    assert obj == before  # the input is not mutated


def test_place_pod_spec_does_not_mutate_its_input() -> None:
    spec = {"containers": CONTAINERS, "nodeSelector": {"a": "b"}, "tolerations": [{"key": "gpu"}]}
    before = copy.deepcopy(spec)
    place_pod_spec(spec, Placement(runtime_class="rc").for_scheduling_only().with_build("10.0.20348"))
    assert spec == before


def test_the_windows_host_dialer_runs_agnhost_as_an_exe_without_a_runtime_class() -> None:
    """kubernetes#112651: in a HostProcess container the image's /agnhost entrypoint does not resolve."""
    dialer = netexec.host_dialer_pod("registry.k8s.io/e2e-test-images/agnhost:2.63.0", "windows")
    placed = place_pod(dialer, Placement(runtime_class="runhcs-wcow-hypervisor"))
    container = placed["spec"]["containers"][0]
    image_root = "%CONTAINER_SANDBOX_MOUNT_POINT%"
    assert container["command"][:9] == ["cmd", "/C", "copy", "/Y", f"{image_root}\\agnhost",
                                        f"{image_root}\\agnhost.exe", "&&", f"{image_root}\\agnhost.exe", "netexec"]
    assert "args" not in container
    assert placed["spec"]["securityContext"]["windowsOptions"]["hostProcess"] is True
    assert placed["spec"]["hostNetwork"] is True and "runtimeClassName" not in placed["spec"]


def test_the_linux_host_dialer_keeps_the_image_entrypoint() -> None:
    dialer = netexec.host_dialer_pod("agnhost", "linux")
    container = dialer["spec"]["containers"][0]
    assert "command" not in container and container["args"][0] == "netexec"
