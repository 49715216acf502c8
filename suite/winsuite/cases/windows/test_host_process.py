"""HostProcess containers (host_process.go): processes on the Windows host, with volumes, metrics and stats."""

from __future__ import annotations

import random
import string
import uuid
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Feature
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import container_output
from winsuite.k8s import kubelet
from winsuite.k8s import manifests
from winsuite.k8s import namespaces
from winsuite.k8s import nodes
from winsuite.k8s import objects
from winsuite.k8s import pods
from winsuite.k8s import retry
from winsuite.k8s import waits

host_process = Describe(Area("sig-windows"), Feature("WindowsHostProcessContainers"), "HostProcess containers")
TWIN = "[sig-windows] [Feature:WindowsHostProcessContainers] HostProcess containers "
NEEDS = [Capability.WINDOWS_KERNEL]
NEEDS_CONTAINERD_1_7 = [Capability.WINDOWS_KERNEL, Capability.HOSTPROCESS]
SANDBOX = "CONTAINER_SANDBOX_MOUNT_POINT"
UPSTREAM = "test/e2e/windows/host_process.go:"
IN_CLUSTER_POD = "host-process-agnhost-icc"

# The container command matrix of containerd 1.6 (KEP-1981): (command, args, workingDir), one pod per batch.
Case = tuple[list[str], list[str], str]
COMMAND_BATCHES: list[list[Case]] = [
    [(["cmd.exe", "/c", "ver"], [], ""), (["System32\\cmd.exe", "/c", "ver"], [], "c:\\Windows"),
     (["System32\\cmd.exe", "/c", "ver"], [], "c:\\Windows\\"), ([f"%{SANDBOX}%\\bin\\uname.exe", "-o"], [], "")],
    [([f"%{SANDBOX}%/bin/uname.exe", "-o"], [], ""), ([f"%{SANDBOX}%\\bin/uname.exe", "-o"], [], ""),
     (["bin/uname.exe", "-o"], [], ""), (["bin/uname.exe", "-o"], [], f"%{SANDBOX}%")],
    [(["bin\\uname.exe", "-o"], [], f"%{SANDBOX}%"), (["uname.exe", "-o"], [], f"%{SANDBOX}%/bin"),
     (["uname.exe", "-o"], [], f"%{SANDBOX}%/bin/"), (["uname.exe", "-o"], [], f"%{SANDBOX}%\\bin\\")],
    [(["powershell", "cmd.exe", "/ver"], [], ""), (["powershell", "c:/Windows/System32/cmd.exe", "/c", "ver"], [], ""),
     (["powershell", "c:\\Windows\\System32/cmd.exe", "/c", "ver"], [], ""),
     (["powershell", f"%{SANDBOX}%\\bin\\uname.exe", "-o"], [], "")],
    [(["powershell", f"$env:{SANDBOX}\\bin\\uname.exe", "-o"], [], ""),
     (["powershell", f"%{SANDBOX}%/bin/uname.exe", "-o"], [], ""),
     (["powershell", f"$env:{SANDBOX}/bin/uname.exe", "-o"], [], ""),
     (["powershell", "bin/uname.exe", "-o"], [], f"%{SANDBOX}%")],
    [(["powershell", "bin/uname.exe", "-o"], [], f"$env:{SANDBOX}"),
     (["powershell", "bin\\uname.exe", "-o"], [], f"$env:{SANDBOX}"),
     (["powershell", ".\\uname.exe", "-o"], [], f"%{SANDBOX}%/bin"),
     (["powershell", "./uname.exe", "-o"], [], f"%{SANDBOX}%/bin")],
    [(["powershell", "./uname.exe", "-o"], [], f"$env:{SANDBOX}\\bin\\"),
     ([f"%{SANDBOX}%\\bin\\uname.exe"], ["-o"], ""), (["bin\\uname.exe"], ["-o"], f"%{SANDBOX}%"),
     (["uname.exe"], ["-o"], f"%{SANDBOX}%\\bin")],
    [(["cmd.exe"], ["/c", "dir", f"%{SANDBOX}%\\bin\\uname.exe"], ""),
     (["cmd.exe"], ["/c", "dir", "bin\\uname.exe"], f"%{SANDBOX}%"),
     (["powershell"], ["Get-ChildItem", "-Path", f"$env:{SANDBOX}\\bin\\uname.exe"], ""),
     (["powershell"], ["Get-ChildItem", "-Path", "bin\\uname.exe"], f"$env:{SANDBOX}")],
    [(["powershell"], ["Get-ChildItem", "-Path", "uname.exe"], f"$env:{SANDBOX}/bin")],
]

# Checks every volume type from inside the container (validation_script of host_process.go).
VALIDATION_SCRIPT = r"""if (-not(Test-Path $env:CONTAINER_SANDBOX_MOUNT_POINT\etc\emptydir)) {
    throw "Cannot find emptydir volume"
}
if (-not(Test-Path $env:CONTAINER_SANDBOX_MOUNT_POINT\etc\configmap\text.txt)) {
    throw "Cannot find text.txt in configmap-volume"
}
$c = Get-Content -Path $env:CONTAINER_SANDBOX_MOUNT_POINT\etc\configmap\text.txt
if ($c -ne "Lorem ipsum dolor sit amet") {
    throw "Contents of /etc/configmap/text.txt are not as expected"
}
if (-not(Test-Path $env:CONTAINER_SANDBOX_MOUNT_POINT\etc\hostpath)) {
    throw "Cannot find hostpath volume"
}
if (-not(Test-Path $env:CONTAINER_SANDBOX_MOUNT_POINT\etc\downwardapi\podname)) {
    throw "Cannot find podname file in downward-api volume"
}
$c = Get-Content -Path $env:CONTAINER_SANDBOX_MOUNT_POINT\etc\downwardapi\podname
if ($c -ne "host-process-volume-mounts") {
    throw "Contents of /etc/downward-api/podname are not as expected"
}
if (-not(Test-Path $env:CONTAINER_SANDBOX_MOUNT_POINT\etc\secret\foo.txt)) {
    throw "Cannot find file foo.txt in secret volume"
}
$c = Get-Content $env:CONTAINER_SANDBOX_MOUNT_POINT\etc\secret\foo.txt
if ($c -ne "bar") {
    Write-Output $c
    throw "Contents of /etc/secret/foo.txt are not as expected"
}
# A Windows computer name has at most 15 characters, so compare the node name with the host name instead
# (case-insensitively).
if ($env:NODE_NAME_TEST -ine "$(hostname)") {
    throw "NODE_NAME_TEST env var ($env:NODE_NAME_TEST) does not equal hostname"
}
Write-Output "SUCCESS"
"""


def busybox(target: Target, name: str, command: list[str], **fields: Any) -> dict[str, Any]:
    return manifests.container(name, target.image("busybox"), command=command, **fields)


def run_to_success(api: client.ApiClient, namespace: str, manifest: dict[str, Any]) -> client.V1Pod:
    """Create the pod, wait for it to finish (3 minutes), and require that it Succeeded."""
    pods.create(api, namespace, manifest)
    return pods.assert_succeeded(api, namespace, manifest["metadata"]["name"])


def windows_node_for_host_process(api: client.ApiClient, namespace: str) -> str:
    namespaces.allow_privileged_pods(api, namespace)
    return objects.name_of(nodes.find_windows_node(api))


def host_name_pod(target: Target, node: str) -> dict[str, Any]:
    """The container's host name is the node's: it runs on the host, not in a container of its own."""
    check = f"& {{if ('{node}' -ine \"$(hostname)\") {{ exit -1 }}}}"
    pod = manifests.host_process_pod("host-process-test-pod", [
        busybox(target, "computer-name-test", ["powershell.exe", "-Command", check])])
    return manifests.pin_to_node(target.place(pod), node)


@windows_pods(lambda target: [host_name_pod(target, "win-0")], upstream=UPSTREAM + "97-140")
@host_process.it("should run as a process on the host/node", twin=TWIN + "should run as a process on the host/node",
                 category="Extend.HostProcess", needs=NEEDS, images=["busybox"])
def test_runs_as_a_process_on_the_host(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    node = windows_node_for_host_process(api, namespace)
    run_to_success(api, namespace, host_name_pod(target, node))


def init_containers_pod(target: Target) -> dict[str, Any]:
    """An init container writes a file on the host; the container finds it."""
    filename = f"/testfile{uuid.uuid4()}.txt"
    configure = busybox(target, "configure-node", ["powershell", "-c", "Set-content", "-Path", filename, "-V", "test"])
    read = busybox(target, "read-configuration", ["powershell", "-c", "ls", filename])
    return target.place(manifests.host_process_pod("host-process-init-pods", [read], initContainers=[configure]))


@windows_pods(lambda target: [init_containers_pod(target)], upstream=UPSTREAM + "148-205")
@host_process.it("should support init containers", twin=TWIN + "should support init containers",
                 category="Extend.HostProcess", needs=NEEDS, images=["busybox"])
def test_init_containers(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    namespaces.allow_privileged_pods(api, namespace)
    run_to_success(api, namespace, init_containers_pod(target))


def command_path_pods(target: Target) -> list[dict[str, Any]]:
    """One pod per batch of the command matrix, a container per case."""
    made = []
    for index, batch in enumerate(COMMAND_BATCHES):
        cases = [manifests.container(f"host-process-command-{index}-{number}", target.image("busybox"),
                                     command=command, args=args, workingDir=working_dir)
                 for number, (command, args, working_dir) in enumerate(batch)]
        made.append(target.place(manifests.host_process_pod(f"host-process-command-{index}", cases,
                                                            user=manifests.NT_AUTHORITY_LOCAL_SERVICE)))
    return made


@windows_pods(command_path_pods, upstream=UPSTREAM + "208-453")
@host_process.it("container command path validation", twin=TWIN + "container command path validation",
                 category="Extend.HostProcess", needs=NEEDS, images=["busybox"])
def test_command_path_validation(api: client.ApiClient, namespace: str, target: Target) -> None:
    """Only for containerd 1.6: 1.7 changed how a HostProcess container's first process is started."""
    nodes.skip_unless_target_os_is_windows(target.os)
    node = nodes.find_windows_node(api)
    nodes.skip_unless_containerd_before_1_7(node)
    namespaces.allow_privileged_pods(api, namespace)
    # One pod per batch, one after the other: Windows containers start slowly.
    for pod in command_path_pods(target):
        run_to_success(api, namespace, pod)


def volume_mounts_pod(target: Target, name: str) -> dict[str, Any]:
    """makeTestPodWithVolumeMounts: emptyDir, configMap, hostPath, downward API and secret volumes."""
    sources: dict[str, dict[str, Any]] = {
        "emptydir": {"emptyDir": {"medium": ""}},
        "configmap": {"configMap": {"name": "sample-config-map", "items": [
            {"key": "text", "path": "text.txt"}, {"key": "validation-script", "path": "validationscript.ps1"}]}},
        "hostpath": {"hostPath": {"path": "/var/hostpath", "type": "DirectoryOrCreate"}},
        "downwardapi": {"downwardAPI": {"items": [{"path": "podname", "fieldRef": {"fieldPath": "metadata.name"}}]}},
        "secret": {"secret": {"secretName": "sample-secret", "items": [{"key": "foo", "path": "foo.txt"}]}},
    }
    # Mounted at /etc/<kind>, which the container finds under $env:CONTAINER_SANDBOX_MOUNT_POINT.
    volumes = [{"name": f"{kind}-volume", **source} for kind, source in sources.items()]
    mounts = [manifests.volume_mount(f"{kind}-volume", f"/etc/{kind}") for kind in sources]
    validator = busybox(target, name, ["powershell.exe", "./etc/configmap/validationscript.ps1"],
                        env=[manifests.env_from_field("NODE_NAME_TEST", "spec.nodeName")], volumeMounts=mounts)
    return target.place(manifests.host_process_pod(name, [validator], volumes=volumes))


@windows_pods(lambda target: [volume_mounts_pod(target, "host-process-volume-mounts")],
              upstream=UPSTREAM + "456-514")
@host_process.it("should support various volume mount types", twin=TWIN + "should support various volume mount types",
                 category="Extend.HostProcess", needs=NEEDS, images=["busybox"])
def test_volume_mount_types(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    namespaces.allow_privileged_pods(api, namespace)
    core = client.CoreV1Api(api)
    retry.call(core.create_namespaced_config_map, namespace, {
        "metadata": {"name": "sample-config-map"},
        "data": {"text": "Lorem ipsum dolor sit amet", "validation-script": VALIDATION_SCRIPT}})
    retry.call(core.create_namespaced_secret, namespace, {
        "metadata": {"name": "sample-secret"}, "type": "Opaque", "stringData": {"foo": "bar"}})
    run_to_success(api, namespace, volume_mounts_pod(target, "host-process-volume-mounts"))


def host_process_counts(api: client.ApiClient, node: str) -> dict[str, float]:
    """getCurrentHostProcessMetrics: started containers and start errors, per container type (0 if unset)."""
    text = kubelet.metrics(api, node)
    counts = {"container": 0.0, "init_container": 0.0, "container errors": 0.0, "init_container errors": 0.0}
    for suffix, metric in (("", "kubelet_started_host_process_containers_total"),
                           (" errors", "kubelet_started_host_process_containers_errors_total")):
        for labels, value in kubelet.samples(text, metric):
            key = labels.get("container_type", "") + suffix
            if key in counts:  # errors of every kind (ErrImagePull, RunContainerError, …) add up
                counts[key] += value
    return counts


def failing_start_pods(target: Target, node: str) -> list[dict[str, Any]]:
    """A pod whose init container fails to start, and one whose container does (an unknown user)."""
    bad_user = {"windowsOptions": {"runAsUserName": "bad-user-name"}}
    failing_init = manifests.host_process_pod(
        "host-process-metrics-pod-failing-init-container",
        [busybox(target, "container", ["cmd.exe", "/c", "exit", "/b", "0"])],
        initContainers=[busybox(target, "failing-init-container", ["foobar.exe"], securityContext=bad_user)])
    failing = manifests.host_process_pod("host-process-metrics-pod-failing-container",
                                         [busybox(target, "failing-container", ["foobar.exe"],
                                                  securityContext=bad_user)])
    return [manifests.pin_to_node(target.place(m), node) for m in (failing_init, failing)]


@windows_pods(lambda target: failing_start_pods(target, "win-0"), upstream=UPSTREAM + "517-620")
@host_process.it("metrics should report count of started and failed to start HostProcess containers",
                 twin=TWIN + "metrics should report count of started and failed to start HostProcess containers",
                 category="Extend.HostProcess", needs=NEEDS, images=["busybox"])
def test_start_metrics(api: client.ApiClient, namespace: str, target: Target) -> None:
    """Relative comparisons only, so that other HostProcess pods on the node cannot break it."""
    nodes.skip_unless_target_os_is_windows(target.os)
    node = windows_node_for_host_process(api, namespace)
    before = host_process_counts(api, node)
    for manifest in failing_start_pods(target, node):
        pods.create(api, namespace, manifest)
        pods.wait_for_finish(api, namespace, manifest["metadata"]["name"])
    after = host_process_counts(api, node)
    unchanged = [key for key in before if not before[key] < after[key]]
    assert not unchanged, f"HostProcess container counts did not increase for {unchanged}: {before} -> {after}"


def stats_pod(target: Target, node: str) -> dict[str, Any]:
    sleeper = busybox(target, "host-process-stats",
                      ["powershell.exe", "-Command", "Write-Host 'Hello'; sleep -Seconds 600"])
    pod = manifests.host_process_pod("host-process-stats-pod", [sleeper], user=manifests.NT_AUTHORITY_LOCAL_SERVICE)
    return manifests.pin_to_node(target.place(pod), node)


@windows_pods(lambda target: [stats_pod(target, "win-0")], upstream=UPSTREAM + "623-672")
@host_process.it("container stats validation", twin=TWIN + "container stats validation",
                 category="Extend.HostProcess", needs=[*NEEDS, Capability.STATS_SUMMARY], images=["busybox"])
def test_container_stats(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    node = windows_node_for_host_process(api, namespace)
    pods.start(api, namespace, stats_pod(target, node), state="Ready")

    def stats_are_sane() -> str:
        """ensurePodsStatsOnNode, until our container's stats are all there and positive."""
        ours = kubelet.pod_stats(kubelet.stats_summary(api, node), namespace)
        checked = [c for p in ours for c in p.get("containers") or []]
        values = [(p.get("cpu") or {}).get("usageCoreNanoSeconds", 0) for p in ours]
        values += [(p.get("memory") or {}).get("workingSetBytes", 0) for p in ours]
        for c in checked:
            values += [(c.get("cpu") or {}).get("usageCoreNanoSeconds", 0),
                       (c.get("memory") or {}).get("workingSetBytes", 0), (c.get("logs") or {}).get("usedBytes", 0)]
        detail = f"stats of the pods of {namespace}: {ours}"
        assert bool(checked) and all(v > 0 for v in values), detail
        return detail

    waits.poll("HostProcess container stats in the summary", stats_are_sane, timeout=180)


def containerd_1_7_node(api: client.ApiClient, namespace: str, target: Target) -> str:
    """skipUnlessContainerdOneSevenOrGreater: the Windows node these tests use, if its containerd is 1.7+."""
    nodes.skip_unless_target_os_is_windows(target.os)
    node = nodes.find_windows_node(api)
    nodes.skip_unless_containerd_1_7_or_later(node)
    namespaces.allow_privileged_pods(api, namespace)
    return objects.name_of(node)


def in_cluster_client_pod(target: Target, node: str) -> dict[str, Any]:
    """agnhost inclusterclient on the host. agnhost has to be copied to agnhost.exe first (microsoft/hcsshim#1128
    and #1174); upstream names the image's directory c:\\hpc, which CONTAINER_SANDBOX_MOUNT_POINT is on
    containerd 1.7."""
    agnhost = manifests.container("hpc-agnhost", target.image("agnhost"),
                                  command=manifests.agnhost_on_host("inclusterclient"))
    return manifests.pin_to_node(target.place(manifests.host_process_pod(IN_CLUSTER_POD, [agnhost])), node)


@windows_pods(lambda target: [in_cluster_client_pod(target, "win-0")], upstream=UPSTREAM + "675-732")
@host_process.it("should support querying api-server using in-cluster config",
                 twin=TWIN + "should support querying api-server using in-cluster config",
                 category="Extend.HostProcess", needs=NEEDS_CONTAINERD_1_7, images=["agnhost"])
def test_in_cluster_config(api: client.ApiClient, namespace: str, target: Target) -> None:
    node = containerd_1_7_node(api, namespace, target)
    name = IN_CLUSTER_POD
    pods.start(api, namespace, in_cluster_client_pod(target, node), state="Ready")
    # inclusterclient calls /healthz every 30 s and logs only failures: a second call means the first returned.
    logs = container_output.wait_for_logs(api, namespace, name, "hpc-agnhost", what="two calls of /healthz",
                                          matches=lambda text: text.count("calling /healthz") >= 2, timeout=180)
    assert "status=failed" not in logs, f"the app failed to query the API server:\n{logs}"


def local_group_pod(target: Target, node: str) -> dict[str, Any]:
    """An init container creates a local group; the container runs as it."""
    group = "hpc-" + "".join(random.choices(string.ascii_lowercase, k=8))
    setup = busybox(target, "setup", ["cmd", "/C", "net", "localgroup", group, "/add"])
    whoami = busybox(target, "localgroup-container", ["cmd", "/C", "whoami"],
                     securityContext={"windowsOptions": {"runAsUserName": group}})
    pod = manifests.host_process_pod("host-process-localgroup-pod", [whoami], initContainers=[setup])
    return manifests.pin_to_node(target.place(pod), node)


@windows_pods(lambda target: [local_group_pod(target, "win-0")], upstream=UPSTREAM + "735-790")
@host_process.it("should run as localgroup accounts", twin=TWIN + "should run as localgroup accounts",
                 category="Extend.HostProcess", needs=NEEDS_CONTAINERD_1_7, images=["busybox"])
def test_local_group_accounts(api: client.ApiClient, namespace: str, target: Target) -> None:
    node = containerd_1_7_node(api, namespace, target)
    run_to_success(api, namespace, local_group_pod(target, node))
    # whoami prints <computer>\<generated user>; every built-in account a HostProcess container may use
    # starts with "nt authority".
    logs = pods.logs(api, namespace, "host-process-localgroup-pod", "localgroup-container")
    assert "nt authority" not in logs.lower(), f"the container ran as a system account: {logs!r}"
