"""Device plugins on Windows (device_plugin.go): the DirectX device plugin hands a GPU to a Windows container."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest
from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.facts import GPU_RESOURCE
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Feature
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import manifests
from winsuite.k8s import nodes
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import waits
from winsuite.k8s.undo import Undo

device_plugin = Describe(Area("sig-windows"), Feature("GPUDevicePlugin"), "Device Plugin")

DAEMON_SET = "directx-device-plugin"
SYSTEM_NAMESPACE = "kube-system"
PLUGIN_DIR = "/var/lib/kubelet/device-plugins"
# The full Windows image (not nanoserver or servercore: they lack DirectX) takes long to pull: upstream
# waits 60 times its usual pod start timeout of 5 minutes.
SLOW_START_TIMEOUT = 60 * 300.0
LOOK_TIMEOUT = 60.0
DXDIAG = ["cmd.exe", "/c", "dxdiag", "/t", "dxdiag_output.txt", "&", "type", "dxdiag_output.txt"]
# If later Windows releases change the DirectX version, these need a check of the node's Windows version.
DXDIAG_EXPECTED = ("DirectX Version: DirectX 12", "DDI Version: 12", "Vendor ID: 0x")


@pytest.fixture
def undo(namespace: str) -> Generator[Undo]:
    """The plugin's DaemonSet lives in kube-system: it goes when the test ends."""
    steps = Undo()
    yield steps
    steps.run()


def plugin_daemon_set(target: Target) -> dict[str, Any]:
    """e2edaemonset.NewDaemonSet with upstream's changes: critical priority, the plugin directory mounted."""
    labels = {"daemonset-name": DAEMON_SET}
    app = manifests.container("app", target.image("directx-device-plugin"), securityContext={},
                              volumeMounts=[manifests.volume_mount("device-plugin", PLUGIN_DIR)],
                              env=[{"name": "DIRECTX_GPU_MATCH_NAME", "value": " "}])
    template = {"metadata": {"labels": labels}, "spec": {
        "containers": [app], "securityContext": {}, "priorityClassName": "system-node-critical",
        "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}],
        "volumes": [{"name": "device-plugin", "hostPath": {"path": PLUGIN_DIR}}]}}
    return target.place({"apiVersion": "apps/v1", "kind": "DaemonSet",
                         "metadata": {"name": DAEMON_SET, "labels": labels},
                         "spec": {"selector": {"matchLabels": labels}, "template": template}})


def look_for(api: client.ApiClient, namespace: str, pod: str, command: list[str], expected: str) -> None:
    """LookForStringInPodExec: run the command until its output contains the string."""

    def found() -> str:
        result = pods.exec_(api, namespace, pod, command, timeout=LOOK_TIMEOUT)
        detail = str(result)
        assert expected in result.stdout, detail
        return detail

    waits.poll(f"{expected!r} in the output of {command}", found, timeout=LOOK_TIMEOUT)


def gpu_user_pod(target: Target) -> dict[str, Any]:
    """A Windows Server Core pod asking for one DirectX device."""
    manifest = manifests.network_test_pod(target.image("windows-servercore"), "windows")
    gpu_user = manifest["spec"]["containers"][0]
    gpu_user["args"] = ["powershell.exe", "Start-Sleep", "3600"]
    gpu_user["resources"] = {"limits": {GPU_RESOURCE: "1"}}
    return target.place(manifest)


@windows_pods(lambda target: [plugin_daemon_set(target), gpu_user_pod(target)],
              upstream="test/e2e/windows/device_plugin.go:53-138")
@device_plugin.it("should be able to create a functioning device plugin for Windows",
                  twin="[sig-windows] [Feature:GPUDevicePlugin] Device Plugin should be able to create a "
                       "functioning device plugin for Windows",
                  category="Extend.Worker", needs=[Capability.WINDOWS_KERNEL, Capability.GPU],
                  images=["directx-device-plugin", "windows-servercore"])
def test_directx_device_plugin(api: client.ApiClient, namespace: str, target: Target, undo: Undo) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    apps = client.AppsV1Api(api)
    undo.add("the device plugin DaemonSet",
             lambda: retry.call(apps.delete_namespaced_daemon_set, DAEMON_SET, SYSTEM_NAMESPACE))
    retry.call(apps.create_namespaced_daemon_set, SYSTEM_NAMESPACE, plugin_daemon_set(target))

    manifest = gpu_user_pod(target)
    name = manifest["metadata"]["name"]
    pods.create(api, namespace, manifest)
    pods.wait_for_pod(api, namespace, name, state="Running", timeout=SLOW_START_TIMEOUT)

    for expected in DXDIAG_EXPECTED:
        look_for(api, namespace, name, DXDIAG, expected)
    look_for(api, namespace, name, ["cmd.exe", "/c", "set", "DIRECTX_GPU_Name"], "DIRECTX_GPU_Name=")
