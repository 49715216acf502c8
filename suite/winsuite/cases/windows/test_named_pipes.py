"""Named pipe host mounts (KEP-116, "What works today"): a named pipe of the host, mapped into a container.

The pipe mapped is the one the KEP's use case names (seed 004, "IPC & Pid": a pod that talks to the host's
container daemon maps its named pipe as a volume, which offers what the Unix socket offers Linux pods): the
container runtime's endpoint, as the kubelet of the pod's node has it (containerRuntimeEndpoint of /configz;
npipe:////./pipe/containerd-containerd on a containerd Windows node). The test is the same on both OSes: on
Linux the runtime's endpoint is a Unix socket, mapped the same way through hostPath, so the embedded
cluster's Linux node runs it for real; on Windows the pipe is mapped at its own path, as Windows requires.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import ClusterSession
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import kubelet
from winsuite.k8s import manifests
from winsuite.k8s import namespaces
from winsuite.k8s import netexec
from winsuite.k8s import pods

named_pipes = Describe(Area("sig-windows"), "Named pipe host mounts")

LINUX_MOUNT = "/var/run/host-runtime.sock"
# Opening the pipe tells a mapped pipe from a missing one; being refused access still proves it is there.
WINDOWS_PROBE = ("try {{ $c = New-Object System.IO.Pipes.NamedPipeClientStream('.', '{name}', 'InOut'); "
                 "$c.Connect(5000); $c.Dispose(); 'visible: connected' }} "
                 "catch [System.UnauthorizedAccessException] {{ 'visible: access denied' }} "
                 "catch {{ \"missing: $_\" }}")


def host_path(endpoint: str) -> str:
    """A CRI endpoint as a host path: unix:///run/x.sock -> /run/x.sock, npipe:////./pipe/x -> \\\\.\\pipe\\x."""
    if endpoint.startswith("npipe://"):
        return endpoint.removeprefix("npipe://").replace("/", "\\")
    return endpoint.removeprefix("unix://")


def runtime_pipe_pod(target: Target, endpoint: str) -> tuple[dict[str, Any], list[str], str, str]:
    """The pod mounting the runtime's endpoint from the host, the command that looks at it in the container, the
    mount path and what the command must print."""
    path = host_path(endpoint)
    if target.os == "windows":
        volume = {"name": "runtime", "hostPath": {"path": path}}
        mount, command = path, ["powershell.exe", "-NoProfile", "-Command",
                                WINDOWS_PROBE.format(name=path.rsplit("\\", 1)[-1])]
        expected = "visible"
    else:
        volume = {"name": "runtime", "hostPath": {"path": path, "type": "Socket"}}
        mount, command, expected = LINUX_MOUNT, ["stat", "-c", "%F", LINUX_MOUNT], "socket"
    manifest = manifests.agnhost_pod(target.image("agnhost"), "runtime-pipe", volumes=[volume],
                                     mounts=[manifests.volume_mount("runtime", mount)])
    return target.place(manifest), command, mount, expected


@windows_pods(lambda target: [runtime_pipe_pod(target, "npipe:////./pipe/containerd-containerd")[0]],
              upstream="no twin: KEP-116 (named pipe host mounts)")
@named_pipes.it("should make the container runtime's named pipe visible in a container (its Unix socket on "
                "Linux)", category="Core.Storage",
                needs=[Capability.RUNS_CONTAINERS, Capability.EXEC, Capability.KUBELET_CONFIGZ], images=["agnhost"])
def test_runtime_pipe_host_mount(api: client.ApiClient, namespace: str, target: Target,
                                 cluster: ClusterSession) -> None:
    names = netexec.eligible_nodes(cluster.facts, target.placement)
    endpoints = {n: str(kubelet.configz(api, n).get("containerRuntimeEndpoint") or "") for n in names}
    if len(set(endpoints.values())) != 1 or not next(iter(endpoints.values())):
        pytest.skip(f"requires one container runtime endpoint on the nodes of the target OS (found: {endpoints})")
    endpoint = next(iter(endpoints.values()))
    namespaces.allow_privileged_pods(api, namespace)  # hostPath volumes are outside the baseline level
    manifest, command, mount, expected = runtime_pipe_pod(target, endpoint)
    path = host_path(endpoint)
    pods.start(api, namespace, manifest)
    result = pods.exec_(api, namespace, "runtime-pipe", command, container="agnhost-container")
    assert result.check().stdout.strip().startswith(expected), (
        f"{path} of the host is not {expected} at {mount} in the container: {result}")
