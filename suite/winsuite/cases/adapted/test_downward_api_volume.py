"""Downward API volume (test/e2e/common/storage/downwardapi_volume.go): pod fields and the container's
resources as files, and updates of labels and annotations reaching the files."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import LinuxOnly
from winsuite.authoring.naming import NodeConformance
from winsuite.authoring.target import Target
from winsuite.k8s import container_output
from winsuite.k8s import manifests
from winsuite.k8s import pods
from winsuite.k8s import retry

dapi_volume = Describe(Area("sig-storage"), "Downward API volume")

POD, CONTAINER, MOUNT = "downwardapi-volume", "client-container", "/etc/podinfo"
UPDATE_TIMEOUT = 180.0  # podLogTimeout of downwardapi_volume.go
NEEDS = [Capability.RUNS_CONTAINERS, Capability.LOGS]
RESOURCE_FILES = {"cpu limit": ("cpu_limit", "2\n"), "memory limit": ("memory_limit", "134217728\n"),
                  "cpu request": ("cpu_request", "1\n"), "memory request": ("memory_request", "33554432\n")}
TWIN = "[sig-storage] Downward API volume should provide {} [NodeConformance] [Conformance]"
READ_ONLY_BY_OWNER = f'mode of file "{MOUNT}/podname": -r--------'
DEFAULT_LIMIT = "node allocatable ({entry}) as default {entry} limit if the limit is not set"


def resource_item(path: str, resource: str) -> manifests.Manifest:
    return {"path": path, "resourceFieldRef": {"containerName": CONTAINER, "resource": resource}}


def field_item(path: str, field: str) -> manifests.Manifest:
    return {"path": path, "fieldRef": {"apiVersion": "v1", "fieldPath": field}}


def volume_pod(target: Target, args: list[str], *, labels: Mapping[str, str] | None = None,
               annotations: Mapping[str, str] | None = None, **container_fields: Any) -> manifests.Manifest:
    """downwardAPIVolumeBasePod: podname and the container's resources as files under MOUNT (plus labels and
    annotations when the pod has any), read by agnhost mounttest with `args`."""
    items = [field_item("podname", "metadata.name"), resource_item("cpu_limit", "limits.cpu"),
             resource_item("cpu_request", "requests.cpu"), resource_item("memory_limit", "limits.memory"),
             resource_item("memory_request", "requests.memory")]
    if labels:
        items.append(field_item("labels", "metadata.labels"))
    if annotations:
        items.append(field_item("annotations", "metadata.annotations"))
    mounttest = manifests.container(CONTAINER, target.image("agnhost"), args=["mounttest", *args],
                                    volumeMounts=[manifests.volume_mount("podinfo", MOUNT)],
                                    **container_fields)
    pod = manifests.pod(POD, [mounttest], labels=labels, annotations=annotations, restartPolicy="Never",
                        volumes=[{"name": "podinfo", "downwardAPI": {"items": items}}])
    return target.place(pod)


def mode_test_pod(target: Target, *, item_mode: int | None = None, default_mode: int | None = None,
                  ) -> manifests.Manifest:
    """downwardAPIVolumePodForModeTest: mounttest prints the mode of the podname file."""
    pod = volume_pod(target, [f"--file_mode={MOUNT}/podname"])
    volume = pod["spec"]["volumes"][0]["downwardAPI"]
    volume["items"] = [field_item("podname", "metadata.name") | ({"mode": item_mode} if item_mode else {})]
    if default_mode is not None:
        volume["defaultMode"] = default_mode
    return pod


def update_test(api: client.ApiClient, namespace: str, target: Target, *, kind: str, before: str,
                change: Mapping[str, str], after: str) -> None:
    """Updating the pod's labels or annotations shows in the mounted file (mounttest prints it in a loop)."""
    args = ["--break_on_expected_content=false", "--retry_time=120", f"--file_content_in_loop={MOUNT}/{kind}"]
    initial = {"labels": {"key1": "value1", "key2": "value2"}, "annotations": {"builder": "bar"}}[kind]
    pods.start(api, namespace, volume_pod(target, args, **{kind: initial}))
    container_output.wait_for_logs(api, namespace, POD, CONTAINER, what=before, matches=lambda text: before in text,
                                   timeout=UPDATE_TIMEOUT)
    retry.call(pods.core(api).patch_namespaced_pod, POD, namespace, {"metadata": {kind: dict(change)}})
    container_output.wait_for_logs(api, namespace, POD, CONTAINER, what=after, matches=lambda text: after in text,
                                   timeout=UPDATE_TIMEOUT)


@dapi_volume.it("should provide podname only", NodeConformance, Conformance,
                twin="[sig-storage] Downward API volume should provide podname only [NodeConformance] "
                     "[Conformance]",
                needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_podname(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = volume_pod(target, [f"--file_content={MOUNT}/podname"])
    container_output.expect_output(api, namespace, pod, [f"{POD}\n"])


@dapi_volume.it("should set DefaultMode on files", LinuxOnly, NodeConformance, Conformance,
                twin="[sig-storage] Downward API volume should set DefaultMode on files [LinuxOnly] "
                     "[NodeConformance] [Conformance]",
                needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_default_mode(api: client.ApiClient, namespace: str, target: Target) -> None:
    container_output.expect_output(api, namespace, mode_test_pod(target, default_mode=0o400), [READ_ONLY_BY_OWNER])


@dapi_volume.it("should set mode on item file", LinuxOnly, NodeConformance, Conformance,
                twin="[sig-storage] Downward API volume should set mode on item file [LinuxOnly] "
                     "[NodeConformance] [Conformance]",
                needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_item_mode(api: client.ApiClient, namespace: str, target: Target) -> None:
    container_output.expect_output(api, namespace, mode_test_pod(target, item_mode=0o400), [READ_ONLY_BY_OWNER])


@dapi_volume.it("should update labels on modification", NodeConformance, Conformance,
                twin="[sig-storage] Downward API volume should update labels on modification "
                     "[NodeConformance] [Conformance]",
                needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_labels_update(api: client.ApiClient, namespace: str, target: Target) -> None:
    update_test(api, namespace, target, kind="labels", before='key1="value1"\n', change={"key3": "value3"},
                after='key3="value3"\n')


@dapi_volume.it("should update annotations on modification", NodeConformance, Conformance,
                twin="[sig-storage] Downward API volume should update annotations on modification "
                     "[NodeConformance] [Conformance]",
                needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_annotations_update(api: client.ApiClient, namespace: str, target: Target) -> None:
    update_test(api, namespace, target, kind="annotations", before='builder="bar"\n',
                change={"builder": "foo"}, after='builder="foo"\n')


@dapi_volume.it_each("should provide container's {entry}", NodeConformance, Conformance, argname="file",
                     entries=RESOURCE_FILES, needs=NEEDS, images=["agnhost"], category="Core.Storage",
                     twins={entry: TWIN.format(f"container's {entry}") for entry in RESOURCE_FILES})
def test_container_resource(api: client.ApiClient, namespace: str, target: Target,
                            file: tuple[str, str]) -> None:
    """downwardAPIVolumeForContainerResources: requests 250m/32Mi, limits 1250m/128Mi."""
    path, expected = file
    resources = manifests.resources({"cpu": "250m", "memory": "32Mi"}, {"cpu": "1250m", "memory": "128Mi"})
    pod = volume_pod(target, [f"--file_content={MOUNT}/{path}"], resources=resources)
    container_output.expect_output(api, namespace, pod, [expected])


@dapi_volume.it_each(f"should provide {DEFAULT_LIMIT}", NodeConformance, Conformance, argname="resource",
                     entries={"cpu": "cpu", "memory": "memory"}, needs=NEEDS, images=["agnhost"],
                     category="Core.Storage",
                     twins={r: TWIN.format(DEFAULT_LIMIT.format(entry=r)) for r in ("cpu", "memory")})
def test_default_limit_from_allocatable(api: client.ApiClient, namespace: str, target: Target,
                                        resource: str) -> None:
    """downwardAPIVolumeForDefaultContainerResources: no limit, so the file holds the node's allocatable."""
    pod = volume_pod(target, [f"--file_content={MOUNT}/{resource}_limit"])
    container_output.expect_output(api, namespace, pod, ["[1-9]"], regex=True)
