"""Rebooting a Windows node (reboot_node.go): its pods come back, reachable again, after a host restart."""

from __future__ import annotations

import base64
import random
from collections.abc import Generator
from typing import Any

import pytest
from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Disruptive
from winsuite.authoring.naming import ExcludedWindowsDocker
from winsuite.authoring.naming import Feature
from winsuite.authoring.naming import Provokes
from winsuite.authoring.naming import Serial
from winsuite.authoring.naming import Slow
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import connectivity
from winsuite.k8s import container_status
from winsuite.k8s import kubelet
from winsuite.k8s import manifests
from winsuite.k8s import namespaces
from winsuite.k8s import nodes
from winsuite.k8s import objects
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s.undo import Undo
from winsuite.k8s.waits import wait_for

reboot_host = Describe(Area("sig-windows"), Feature("Windows"), ExcludedWindowsDocker, "RebootHost containers",
                       Serial, Disruptive, Slow)

REBOOT_USED_LABEL = "test/reboot-used"
REBOOT_TIMEOUT = 600.0
RECORD_DATES = ["$os = Get-WmiObject -Class win32_operatingsystem;",
                "[Environment]::SetEnvironmentVariable(\"TMP_BOOT_DATE\", $os.LastBootUpTime, \"Machine\");",
                "[Environment]::SetEnvironmentVariable(\"TMP_INSTALL_DATE\", $os.InstallDate, \"Machine\");"]
# After the restart: the boot date moved forward, the install date did not (the same Windows came back).
CHECK_DATES = ["$os = Get-WmiObject -Class win32_operatingsystem;",
               "$lastBootTime = [Environment]::GetEnvironmentVariable(\"TMP_BOOT_DATE\", \"Machine\");",
               "$lastInstallTime = [Environment]::GetEnvironmentVariable(\"TMP_INSTALL_DATE\", \"Machine\");",
               "$timeInterval = $os.ConvertToDateTime($os.LastBootUpTime) -  $os.ConvertToDateTime($lastBootTime);",
               "$installInterval = $os.ConvertToDateTime($os.InstallDate) -  $os.ConvertToDateTime($lastInstallTime);",
               "if ( $timeInterval.TotalSeconds -le 0 ) {exit -1};",
               "if ( $installInterval.TotalSeconds -ne 0 ) {exit -1};",
               "[Environment]::SetEnvironmentVariable(\"TMP_BOOT_DATE\", $null, \"Machine\");",
               "[Environment]::SetEnvironmentVariable(\"TMP_INSTALL_DATE\", $null, \"Machine\");"]
# Deletes the containers the test left on the node (calico can leave them undeletable after a reboot,
# projectcalico/calico#6974), then restarts the node once more.
CLEANUP_SCRIPT = r"""Write-Host "Running cleanup script";
$ErrorActionPreference = "Stop";
$lines = & "$Env:ProgramFiles\\containerd\\ctr.exe" -n k8s.io containers list |
    Select-String "io.containerd.runhcs.v1";
$namespaces = @($NAMESPACES$);
foreach ($line in $lines) {
    $columns = $line.ToString().Split(" ", [System.StringSplitOptions]::RemoveEmptyEntries);
    $containerId = $columns[0].ToLower();
    $json = & "$Env:ProgramFiles\\containerd\\ctr.exe" -n k8s.io containers info $containerId | ConvertFrom-Json
    $containerName = $json.Labels.'io.kubernetes.container.name';
    $podName = $json.Labels.'io.kubernetes.pod.name';
    $nsName = $json.Labels.'io.kubernetes.pod.namespace';
    if (-not ($namespaces -Contains $nsName)) {
        Write-Host "Skipping container $containerId, $containerName, $podName, $nsName";
        continue;
    }
    if ($containerName -eq "$CONTAINERNAME$") {
        Write-Host "Skipping container $containerId, $containerName, $podName, $nsName";
        continue;
    }
    Write-Host "Deleting container $containerId, $containerName, $podName, $nsName";
    try {
        & "$Env:ProgramFiles\\containerd\\ctr.exe" -n k8s.io containers delete $containerId;
    } catch {
        Write-Host "Failed to delete container $containerId, $containerName, $podName, $nsName";
        Write-Host $_.Exception.Message;
    }
}
Write-Host "Rebooting host";
shutdown.exe -r -t 5;
Write-Host "Cleanup script finished";
"""


@pytest.fixture
def undo(namespace: str) -> Generator[Undo]:
    steps = Undo()
    yield steps
    steps.run()


def encoded_powershell(script: str) -> str:
    """encodePowerShellCommand: what powershell.exe -EncodedCommand takes (base64 of UTF-16LE)."""
    return base64.b64encode(script.encode("utf-16-le")).decode()


def host_pod(target: Target, name: str, container: str, command: list[str], node: str) -> dict[str, Any]:
    agnhost = manifests.container(container, target.image("agnhost"), command=command)
    return manifests.pin_to_node(target.place(manifests.host_process_pod(name, [agnhost])), node)


def restart_count(pod: client.V1Pod) -> int:
    return container_status.restart_count(pod, "windows-container")


def wait_for_reboot(api: client.ApiClient, node: str, boot_id: str) -> client.V1Node:
    """Until the node reports a new boot and is Ready again."""
    rebooted: client.V1Node = wait_for(
        client.CoreV1Api(api).list_node, name=node, namespace=None, what=f"{node} to reboot and be Ready",
        condition=lambda n: nodes.boot_id(n) != boot_id and nodes.is_ready(n), timeout=REBOOT_TIMEOUT,
        describe=lambda n: f"bootID {nodes.boot_id(n)!r}, Ready={nodes.is_ready(n)}")
    return rebooted


def clean_up_containers(api: client.ApiClient, namespace: str, target: Target, node: str) -> None:
    """cleanupContainers, for this test's namespace (upstream leaves its own namespace out of the list it
    passes, which makes the step a restart only), then waits for the node to be back."""
    container = f"cleanup-container-{random.getrandbits(31):08x}"
    script = CLEANUP_SCRIPT.replace("$CONTAINERNAME$", container).replace("$NAMESPACES$", f'"{namespace}"')
    boot_id = nodes.boot_id(nodes.read_node(api, node))
    pods.create(api, namespace, host_pod(target, "cleanup-pod", container,
                                         ["powershell.exe", "-encodedCommand", encoded_powershell(script)], node))
    pods.wait_for_finish(api, namespace, "cleanup-pod", timeout=120)
    pods.delete(api, namespace, "cleanup-pod")
    wait_for_reboot(api, node, boot_id)


def mark_node_used(api: client.ApiClient, node: str) -> None:
    """patchWindowsNodeIfNeeded: the eviction test stays away from nodes marked so."""
    patch = {"metadata": {"labels": {REBOOT_USED_LABEL: "true"}}}
    retry.call(client.CoreV1Api(api).patch_node, node, patch)


def reboot_pods(target: Target, node: str) -> list[dict[str, Any]]:
    """The Windows web server (restarted by the reboot), the Linux nginx, the HostProcess pod that restarts
    the node and the one that checks it restarted."""
    web = manifests.network_test_pod(target.image("agnhost"), "windows", "test-webserver")
    web["spec"]["restartPolicy"] = "Always"
    nginx = manifests.on_linux(manifests.network_test_pod(target.image("nginx", os="linux"), "linux"),
                              target.placement.simulated_nodes)
    reboot = host_pod(target, "reboot-host-test-pod", "reboot-computer-test",
                      ["powershell.exe", "-Command", *RECORD_DATES, "shutdown.exe -r -t 30"], node)
    check = host_pod(target, "check-reboot-pod", "reboot-computer-check",
                     ["powershell.exe", "-Command", *CHECK_DATES], node)
    return [manifests.pin_to_node(target.place(web), node), nginx, reboot, check]


@windows_pods(lambda target: reboot_pods(target, "win-0"), upstream="test/e2e/windows/reboot_node.go:55-250")
@reboot_host.it("should run as a reboot process on the host/node",
                twin="[sig-windows] [Feature:Windows] [Excluded:WindowsDocker] RebootHost containers [Serial] "
                     "[Disruptive] [Slow] should run as a reboot process on the host/node",
                category="Extend.HostProcess", images=["agnhost", "nginx"],
                needs=[Capability.WINDOWS_KERNEL, Capability.KUBELET_CONFIGZ, Capability.LINUX_AND_WINDOWS_CONTAINERS,
                       Capability.CLUSTER_DNS, Capability.EXTERNAL_NETWORK],
                provokes=[Provokes.NODE_DISRUPTION])
def test_reboot_node(api: client.ApiClient, namespace: str, target: Target, undo: Undo) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    found = nodes.windows_nodes(api)
    if not found:
        pytest.skip("requires a Ready and schedulable Windows node that runs containers (found: none)")
    # Reuse a node rebooted before, so that the reboots stay on one node.
    node_object = next((n for n in found if REBOOT_USED_LABEL in objects.labels_of(n)), found[0])
    node = objects.name_of(node_object)
    # Upstream skips this test "until graceful shutdown feature enabled": winsuite runs it where it is.
    kubelet.skip_unless_graceful_node_shutdown(api, node)
    namespaces.allow_privileged_pods(api, namespace)
    undo.add("the containers left on the node", lambda: clean_up_containers(api, namespace, target, node))
    undo.add("the reboot-used label", lambda: mark_node_used(api, node))
    boot_id = int(nodes.boot_id(node_object))

    web, nginx, reboot, check = reboot_pods(target, node)
    agn_pod = pods.start(api, namespace, web, state="Ready")
    nginx_pod = pods.start(api, namespace, nginx, state="Ready")
    linux, windows_name = objects.name_of(nginx_pod), objects.name_of(agn_pod)
    connectivity.assert_consistent_connectivity(api, namespace, linux, container="linux-container",
                                           command=connectivity.linux_check("8.8.8.8", 53),
                                           max_tries=connectivity.EXTERNAL_MAX_TRIES)
    connectivity.assert_consistent_connectivity(api, namespace, windows_name, container="windows-container",
                                           command=connectivity.windows_check("www.google.com"),
                                           max_tries=connectivity.EXTERNAL_MAX_TRIES)
    connectivity.assert_consistent_connectivity(api, namespace, linux, container="linux-container",
                                           command=connectivity.linux_check(pods.pod_ip(agn_pod), 80),
                                           max_tries=connectivity.INTERNAL_MAX_TRIES)
    initial = restart_count(agn_pod)

    pods.create(api, namespace, reboot)
    pods.assert_succeeded(api, namespace, "reboot-host-test-pod")
    # The web server's container restarts with the host.
    pods.wait_until(api, namespace, windows_name, "to restart after the reboot",
                    lambda p: restart_count(p) > initial, timeout=REBOOT_TIMEOUT)

    rebooted = nodes.read_node(api, node)
    assert int(nodes.boot_id(rebooted)) == boot_id + 1, (
        f"BootID should be incremented by 1 after reboot: {boot_id} -> {nodes.boot_id(rebooted)}")
    after = pods.get(api, namespace, windows_name)
    assert restart_count(after) - initial == 1, (
        f"the restart count of {windows_name} should have grown by 1: {pods.describe(after)}")
    assert pods.phase_of(after) == "Running", pods.describe(after)
    connectivity.assert_consistent_connectivity(api, namespace, linux, container="linux-container",
                                           command=connectivity.linux_check(pods.pod_ip(after), 80),
                                           max_tries=connectivity.INTERNAL_MAX_TRIES)

    pods.create(api, namespace, check)
    pods.assert_succeeded(api, namespace, "check-reboot-pod")
