"""ConfigMap as environment variables (test/e2e/common/node/configmap.go) and as volumes
(test/e2e/common/storage/configmap_volume.go)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import LinuxOnly
from winsuite.authoring.naming import NodeConformance
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import container_output
from winsuite.k8s import manifests
from winsuite.k8s import pods
from winsuite.k8s import retry

cm_env = Describe(Area("sig-node"), "ConfigMap")
cm_volume = Describe(Area("sig-storage"), "ConfigMap")

DATA = {"data-1": "value-1", "data-2": "value-2", "data-3": "value-3"}
MOUNT, VOLUME = "/etc/configmap-volume", "configmap-volume"
UPDATE_TIMEOUT = 240.0  # GetPodSecretUpdateTimeout: the kubelet's sync period plus the configmap cache TTL
NEEDS = [Capability.RUNS_CONTAINERS, Capability.LOGS]


def create_config_map(api: client.ApiClient, namespace: str, name: str, **body: object) -> None:
    manifest = {"metadata": {"name": name}, "data": dict(DATA), **body}
    retry.call(client.CoreV1Api(api).create_namespaced_config_map, namespace, manifest)


def env_pod(target: Target, **fields: Any) -> manifests.Manifest:
    """A busybox container printing its environment, set by `fields` (env=…, envFrom=…).

    Upstream runs `sh -c env`; `env` alone prints the same environment without a shell in between that may
    drop the variables whose names are not shell identifiers (data-1, p-data-1: busybox ash before 1.36 does).
    """
    busybox = manifests.container("env-test", target.image("busybox"), command=["env"], **fields)
    return target.place(manifests.pod("pod-configmaps", [busybox], restartPolicy="Never"))


def mounttest_pod(target: Target, config_map: str, *args: str, **volume: object) -> manifests.Manifest:
    """createConfigMapVolumeMounttestPod: agnhost mounttest over the configmap mounted read-only at MOUNT."""
    volumes = [{"name": VOLUME, "configMap": {"name": config_map, **volume}}]
    mounts = [manifests.volume_mount(VOLUME, MOUNT, read_only=True)]
    return manifests.agnhost_pod(target.image("agnhost"), "pod-configmaps", "mounttest", *args,
                                 volumes=volumes, mounts=mounts, restartPolicy="Never",
                                 terminationGracePeriodSeconds=1)


def looping_mounttest_pod(target: Target, config_map: str) -> manifests.Manifest:
    """mounttest printing data-1 over and over, so that updates show in its logs."""
    return mounttest_pod(target, config_map, "--break_on_expected_content=false",
                         f"--retry_time={UPDATE_TIMEOUT:.0f}", f"--file_content_in_loop={MOUNT}/data-1")


def wait_for_content(api: client.ApiClient, namespace: str, value: str,
                     container: str = "agnhost-container") -> None:
    container_output.wait_for_logs(api, namespace, "pod-configmaps", container, what=value,
                                   matches=lambda text: value in text, timeout=UPDATE_TIMEOUT)


def consume_in_volume(api: client.ApiClient, namespace: str, target: Target, *, as_user: bool = False,
                      mode: int | None = None, mapped: bool = False) -> None:
    """doConfigMapE2EWithoutMappings / doConfigMapE2EWithMappings (without fsGroup)."""
    create_config_map(api, namespace, "configmap-test-volume")
    path = f"{MOUNT}/path/to/data-2" if mapped else f"{MOUNT}/data-1"
    value = DATA["data-2" if mapped else "data-1"]
    container_output.expect_output(api, namespace, volume_pod(target, as_user=as_user, mode=mode, mapped=mapped), [
        re.escape(f'content of file "{path}": {value}'), container_output.file_mode_regex(path, mode)], regex=True)


UPSTREAM = "test/e2e/common/storage/configmap_volume.go:"


def volume_pod(target: Target, *, as_user: bool = False, mode: int | None = None,
               mapped: bool = False) -> manifests.Manifest:
    """The mounttest pod of doConfigMapE2EWithoutMappings / WithMappings, placed."""
    path = f"{MOUNT}/path/to/data-2" if mapped else f"{MOUNT}/data-1"
    volume: dict[str, object] = {}
    if mapped:
        volume["items"] = [{"key": "data-2", "path": "path/to/data-2", **({"mode": mode} if mode else {})}]
    elif mode is not None:
        volume["defaultMode"] = mode
    pod = mounttest_pod(target, "configmap-test-volume", f"--file_content={path}", f"--file_mode={path}",
                        **volume)
    if as_user:
        pod = manifests.run_as_non_root(pod, target.os)
    return target.place(pod)


@cm_env.it("should be consumable via environment variable", NodeConformance, Conformance,
           twin="[sig-node] ConfigMap should be consumable via environment variable "
                "[NodeConformance] [Conformance]",
           needs=NEEDS, images=["busybox"])
def test_env_var(api: client.ApiClient, namespace: str, target: Target) -> None:
    create_config_map(api, namespace, "configmap-test")
    ref = {"configMapKeyRef": {"name": "configmap-test", "key": "data-1"}}
    pod = env_pod(target, env=[{"name": "CONFIG_DATA_1", "valueFrom": ref}])
    container_output.expect_output(api, namespace, pod, ["CONFIG_DATA_1=value-1"])


@cm_env.it("should be consumable via the environment", NodeConformance, Conformance,
           twin="[sig-node] ConfigMap should be consumable via the environment [NodeConformance] "
                "[Conformance]",
           needs=NEEDS, images=["busybox"])
def test_env_from(api: client.ApiClient, namespace: str, target: Target) -> None:
    create_config_map(api, namespace, "configmap-test")
    source = {"configMapRef": {"name": "configmap-test"}}
    pod = env_pod(target, envFrom=[source, {"prefix": "p-", **source}])
    container_output.expect_output(api, namespace, pod, [f"{prefix}{k}={v}" for prefix in ("", "p-")
                                                         for k, v in DATA.items()])


@cm_env.it("should be consumable as environment variable names with various prefixes", Conformance,
           twin="[sig-node] ConfigMap should be consumable as environment variable names with various "
                "prefixes [Conformance]",
           needs=NEEDS, images=["busybox"])
def test_env_from_with_prefixes(api: client.ApiClient, namespace: str, target: Target) -> None:
    create_config_map(api, namespace, "configmap-test")
    prefixes = ("", "1-", "$_-", "ABC_", "#@!")
    source = {"configMapRef": {"name": "configmap-test"}}
    pod = env_pod(target, envFrom=[{"prefix": p, **source} if p else source for p in prefixes])
    container_output.expect_output(api, namespace, pod, [f"{p}{k}={v}" for p in prefixes for k, v in DATA.items()])


@cm_env.it("should fail to create ConfigMap with empty key", Conformance,
           twin="[sig-node] ConfigMap should fail to create ConfigMap with empty key [Conformance]")
def test_empty_key(api: client.ApiClient, namespace: str) -> None:
    with pytest.raises(ApiException) as raised:
        retry.call(client.CoreV1Api(api).create_namespaced_config_map, namespace,
                   {"metadata": {"name": "configmap-test-emptykey"}, "data": {"": "value-1"}})
    assert raised.value.status == 422, f"expected 422 Invalid, got {raised.value.status}: {raised.value.body}"


@windows_pods(lambda target: [volume_pod(target)], upstream=UPSTREAM + "47-55,589-628")
@cm_volume.it("should be consumable from pods in volume", NodeConformance, Conformance,
              twin="[sig-storage] ConfigMap should be consumable from pods in volume [NodeConformance] "
                   "[Conformance]",
              needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_volume(api: client.ApiClient, namespace: str, target: Target) -> None:
    consume_in_volume(api, namespace, target)


@cm_volume.it("should be consumable from pods in volume with defaultMode set", LinuxOnly, NodeConformance,
              Conformance,
              twin="[sig-storage] ConfigMap should be consumable from pods in volume with defaultMode set "
                   "[LinuxOnly] [NodeConformance] [Conformance]",
              needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_volume_default_mode(api: client.ApiClient, namespace: str, target: Target) -> None:
    consume_in_volume(api, namespace, target, mode=0o400)


@windows_pods(lambda target: [volume_pod(target, as_user=True)], upstream=UPSTREAM + "74-87,589-628")
@cm_volume.it("should be consumable from pods in volume as non-root", NodeConformance, Conformance,
              twin="[sig-storage] ConfigMap should be consumable from pods in volume as non-root "
                   "[NodeConformance] [Conformance]",
              needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_volume_as_non_root(api: client.ApiClient, namespace: str, target: Target) -> None:
    consume_in_volume(api, namespace, target, as_user=True)


@windows_pods(lambda target: [volume_pod(target, mapped=True)], upstream=UPSTREAM + "89-97,630-680")
@cm_volume.it("should be consumable from pods in volume with mappings", NodeConformance, Conformance,
              twin="[sig-storage] ConfigMap should be consumable from pods in volume with mappings "
                   "[NodeConformance] [Conformance]",
              needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_volume_with_mappings(api: client.ApiClient, namespace: str, target: Target) -> None:
    consume_in_volume(api, namespace, target, mapped=True)


@cm_volume.it("should be consumable from pods in volume with mappings and Item mode set", LinuxOnly,
              NodeConformance, Conformance,
              twin="[sig-storage] ConfigMap should be consumable from pods in volume with mappings and Item "
                   "mode set [LinuxOnly] [NodeConformance] [Conformance]",
              needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_volume_with_mappings_and_mode(api: client.ApiClient, namespace: str, target: Target) -> None:
    consume_in_volume(api, namespace, target, mapped=True, mode=0o400)


@windows_pods(lambda target: [volume_pod(target, mapped=True, as_user=True)], upstream=UPSTREAM + "109-117,630-680")
@cm_volume.it("should be consumable from pods in volume with mappings as non-root", NodeConformance,
              Conformance,
              twin="[sig-storage] ConfigMap should be consumable from pods in volume with mappings as "
                   "non-root [NodeConformance] [Conformance]",
              needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_volume_with_mappings_as_non_root(api: client.ApiClient, namespace: str, target: Target) -> None:
    consume_in_volume(api, namespace, target, mapped=True, as_user=True)


@cm_volume.it("updates should be reflected in volume", NodeConformance, Conformance,
              twin="[sig-storage] ConfigMap updates should be reflected in volume [NodeConformance] "
                   "[Conformance]",
              needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_volume_updates(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "configmap-test-upd"
    retry.call(client.CoreV1Api(api).create_namespaced_config_map, namespace,
               {"metadata": {"name": name}, "data": {"data-1": "value-1"}})
    pods.start(api, namespace, target.place(looping_mounttest_pod(target, name)))
    wait_for_content(api, namespace, "value-1")
    retry.call(client.CoreV1Api(api).replace_namespaced_config_map, name, namespace,
               {"metadata": {"name": name}, "data": {"data-1": "value-2"}})
    wait_for_content(api, namespace, "value-2")


@cm_volume.it("binary data should be reflected in volume", NodeConformance, Conformance,
              twin="[sig-storage] ConfigMap binary data should be reflected in volume [NodeConformance] "
                   "[Conformance]",
              needs=NEEDS, images=["agnhost", "busybox"], category="Core.Storage")
def test_volume_binary_data(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "configmap-test-upd"
    retry.call(client.CoreV1Api(api).create_namespaced_config_map, namespace,
               {"metadata": {"name": name}, "data": {"data-1": "value-1"},
                "binaryData": {"dump.bin": "3sr+utD+/w=="}})  # base64 of de ca fe ba d0 fe ff
    pod = looping_mounttest_pod(target, name)
    pod["spec"]["containers"].append(manifests.container(
        "configmap-volume-binary-test", target.image("busybox"),
        command=["hexdump", "-C", f"{MOUNT}/dump.bin"],
        volumeMounts=[manifests.volume_mount(VOLUME, MOUNT, read_only=True)]))
    pods.start(api, namespace, target.place(pod))
    wait_for_content(api, namespace, "value-1")
    wait_for_content(api, namespace, "de ca fe ba d0 fe ff", container="configmap-volume-binary-test")


@cm_volume.it("should be consumable in multiple volumes in the same pod", NodeConformance, Conformance,
              twin="[sig-storage] ConfigMap should be consumable in multiple volumes in the same pod "
                   "[NodeConformance] [Conformance]",
              needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_volume_twice_in_a_pod(api: client.ApiClient, namespace: str, target: Target) -> None:
    create_config_map(api, namespace, "configmap-test-volume")
    pod = mounttest_pod(target, "configmap-test-volume", f"--file_content={MOUNT}/data-1")
    pod["spec"]["volumes"].append({"name": f"{VOLUME}-2", "configMap": {"name": "configmap-test-volume"}})
    pod["spec"]["containers"][0]["volumeMounts"].append(
        manifests.volume_mount(f"{VOLUME}-2", f"{MOUNT}-2", read_only=True))
    expected = f'content of file "{MOUNT}/data-1": value-1'
    container_output.expect_output(api, namespace, target.place(pod), [expected])
