"""Hyper-V isolated containers (hyperv.go): a pod of the Hyper-V RuntimeClass runs in a utility VM."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.facts import HYPERV_RUNTIME_CLASS
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Feature
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import manifests
from winsuite.k8s import namespaces
from winsuite.k8s import nodes
from winsuite.k8s import objects
from winsuite.k8s import pods

hyperv = Describe(Area("sig-windows"), Feature("WindowsHyperVContainers"), "HyperV containers")

HELLO = ["powershell.exe", "-Command", "Write-Host 'Hello'; sleep -Seconds 600"]
# Each pod runs in its own utility VM, owned by the runhcs shim: one such VM must exist on the host.
FIND_UTILITY_VM = ("$vms = Get-ComputeProcess | Where-Object { ($_.Type -EQ 'VirtualMachine') -and "
                   "($_.Owner -EQ 'containerd-shim-runhcs-v1.exe') } ; if ($vms.Length -le 0) { throw 'error' }")
START_TIMEOUT = 180.0


def hyperv_pods(target: Target, node: str) -> list[dict[str, Any]]:
    """The Hyper-V isolated pod, and the HostProcess pod that looks at the host for its utility VM."""
    image = target.image("busybox")
    isolated = manifests.pod("hyperv-test-pod", [manifests.container("busybox-1", image, command=HELLO),
                                                 manifests.container("busybox-2", image, command=HELLO)],
                             restartPolicy="Never", runtimeClassName=HYPERV_RUNTIME_CLASS)
    validation = manifests.host_process_pod("validation-pod", [
        manifests.container("container", image, command=["powershell.exe", "-Command", FIND_UTILITY_VM])])
    return [manifests.pin_to_node(target.place(m), node) for m in (isolated, validation)]


@windows_pods(lambda target: hyperv_pods(target, "win-0"), upstream="test/e2e/windows/hyperv.go:47-140")
@hyperv.it("should start a hyperv isolated container",
           twin="[sig-windows] [Feature:WindowsHyperVContainers] HyperV containers should start a hyperv isolated "
                "container",
           category="Extend.Worker", needs=[Capability.WINDOWS_KERNEL, Capability.HOSTPROCESS, Capability.HYPERV],
           images=["busybox"])
def test_hyperv_isolated_container(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    node = nodes.find_windows_node(api)
    nodes.skip_unless_containerd_1_7_or_later(node)
    namespaces.allow_privileged_pods(api, namespace)
    isolated, validation = hyperv_pods(target, objects.name_of(node))
    pods.start(api, namespace, isolated, state="Ready", timeout=START_TIMEOUT)
    pods.create(api, namespace, validation)  # a HostProcess pod looks at the host for the utility VM
    pods.assert_succeeded(api, namespace, "validation-pod", timeout=START_TIMEOUT)
