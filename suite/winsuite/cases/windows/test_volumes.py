"""Windows volume mounts (volumes.go): read-only mounts are enforced by the file system's ACLs."""

from __future__ import annotations

import uuid
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Feature
from winsuite.authoring.target import Target
from winsuite.authoring.targeting import OS_LABEL
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import manifests
from winsuite.k8s import namespaces
from winsuite.k8s import nodes
from winsuite.k8s import pods

permissions = Describe(Area("sig-windows"), Feature("Windows"), "Windows volume mounts") \
    .describe("check volume mount permissions")
TWIN = "[sig-windows] [Feature:Windows] Windows volume mounts check volume mount permissions "

EMPTY_DIR_PATH = "C:\\test-volume"
HOST_MAP_PATH = "C:\\tmp"
CONTAINER = "test-container"
VOLUME = "test-volume"
CONTENT = "windows-volume-test"
ACCESS_DENIED = "Access is denied."
EMPTY_DIR = {"emptyDir": {"medium": ""}}
HOST_MAP = {"hostPath": {"path": HOST_MAP_PATH, "type": "DirectoryOrCreate"}}


def pod_with_read_only_volume(target: Target, source: dict[str, Any], path: str) -> dict[str, Any]:
    """testPodWithROVolume: a pause container with the volume mounted read-only."""
    pause = manifests.container(CONTAINER, target.image("pause"),
                                volumeMounts=[manifests.volume_mount(VOLUME, path, read_only=True)])
    manifest = manifests.pod(f"pod-{uuid.uuid4()}", [pause], restartPolicy="Never",
                             volumes=[{"name": VOLUME, **source}])
    return target.place(manifest)


def create_on_windows(api: client.ApiClient, namespace: str, manifest: dict[str, Any]) -> str:
    name = manifest["metadata"]["name"]
    created = pods.create(api, namespace, manifest)
    # Admission controllers may sometimes do the wrong thing.
    selector = (created.spec.node_selector if created.spec else None) or {}
    assert selector.get(OS_LABEL) == "windows", f"pod.spec.nodeSelector: {selector}"
    pods.wait_for_pod(api, namespace, name, state="Ready", timeout=pods.POD_START_TIMEOUT)
    return str(name)


def write(path: str) -> list[str]:
    return ["cmd", "/c", f"echo {CONTENT}", ">", path]


def run(api: client.ApiClient, namespace: str, pod: str, container: str,
        command: list[str]) -> pods.ExecResult:
    """ExecCommandInContainerWithFullOutput: the output trimmed of surrounding white space."""
    result = pods.exec_(api, namespace, pod, command, container=container)
    return pods.ExecResult(result.stdout.strip(), result.stderr.strip(), result.exit_code)


def assert_write_denied(api: client.ApiClient, namespace: str, pod: str, path: str) -> None:
    denied = run(api, namespace, pod, CONTAINER, write(path))
    assert denied.stderr == ACCESS_DENIED, f"writing to the read-only volume: {denied}"


def read_write_pod(target: Target, source: dict[str, Any], path: str) -> dict[str, Any]:
    """doReadWriteReadOnlyTest's pod: a sibling container mounts the volume read-write."""
    manifest = pod_with_read_only_volume(target, source, path)
    manifest["spec"]["containers"].append(manifests.container(
        CONTAINER + "-rw", target.image("pause"), volumeMounts=[manifests.volume_mount(VOLUME, path)]))
    return manifest


def read_only_pods(target: Target, source: dict[str, Any], path: str) -> list[dict[str, Any]]:
    return [pod_with_read_only_volume(target, source, path), read_write_pod(target, source, path)]


def read_only_test(api: client.ApiClient, namespace: str, target: Target, source: dict[str, Any],
                   path: str) -> None:
    """doReadOnlyTest: writing to a read-only mount is denied."""
    pod = create_on_windows(api, namespace, pod_with_read_only_volume(target, source, path))
    assert_write_denied(api, namespace, pod, path + "\\test-file.txt")


def read_write_read_only_test(api: client.ApiClient, namespace: str, target: Target, source: dict[str, Any],
                              path: str) -> None:
    """doReadWriteReadOnlyTest: a sibling mounting the volume read-write writes; the read-only one cannot,
    but reads what was written."""
    file_path = f"{path}\\test-file{uuid.uuid4()}"
    pod = create_on_windows(api, namespace, read_write_pod(target, source, path))
    written = run(api, namespace, pod, CONTAINER + "-rw", write(file_path))
    assert written.exit_code == 0, f"writing through the read-write mount: {written}"
    assert_write_denied(api, namespace, pod, file_path)
    read = run(api, namespace, pod, CONTAINER, ["cmd", "/c", "type", file_path])
    assert read.stdout == CONTENT, f"reading through the read-only mount: {read}"
    assert read.exit_code == 0, f"reading through the read-only mount: {read}"


@windows_pods(lambda target: read_only_pods(target, EMPTY_DIR, EMPTY_DIR_PATH),
              upstream="test/e2e/windows/volumes.go:67-74,84-150")
@permissions.it("container should have readOnly permissions on emptyDir",
                twin=TWIN + "container should have readOnly permissions on emptyDir",
                category="Core.Storage", needs=[Capability.WINDOWS_KERNEL])
def test_read_only_empty_dir(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    read_only_test(api, namespace, target, EMPTY_DIR, EMPTY_DIR_PATH)
    read_write_read_only_test(api, namespace, target, EMPTY_DIR, EMPTY_DIR_PATH)


@windows_pods(lambda target: read_only_pods(target, HOST_MAP, HOST_MAP_PATH),
              upstream="test/e2e/windows/volumes.go:76-82,84-150")
@permissions.it("container should have readOnly permissions on hostMapPath",
                twin=TWIN + "container should have readOnly permissions on hostMapPath",
                category="Core.Storage", needs=[Capability.WINDOWS_KERNEL])
def test_read_only_host_path(api: client.ApiClient, namespace: str, target: Target) -> None:
    nodes.skip_unless_target_os_is_windows(target.os)
    namespaces.allow_privileged_pods(api, namespace)
    read_only_test(api, namespace, target, HOST_MAP, HOST_MAP_PATH)
    read_write_read_only_test(api, namespace, target, HOST_MAP, HOST_MAP_PATH)
