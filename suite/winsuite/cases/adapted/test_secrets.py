"""Secrets as environment variables (test/e2e/common/node/secrets.go) and as volumes
(test/e2e/common/storage/secrets_volume.go)."""

from __future__ import annotations

import re
import secrets
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
from winsuite.authoring.target import ClusterSession
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import container_output
from winsuite.k8s import manifests
from winsuite.k8s import namespaces
from winsuite.k8s import retry

sec_env = Describe(Area("sig-node"), "Secrets")
sec_volume = Describe(Area("sig-storage"), "Secrets")

DATA = {"data-1": "value-1\n", "data-2": "value-2\n", "data-3": "value-3\n"}
MOUNT, VOLUME = "/etc/secret-volume", "secret-volume"
NEEDS = [Capability.RUNS_CONTAINERS, Capability.LOGS]


def create_secret(api: client.ApiClient, namespace: str, name: str,
                  data: dict[str, str] | None = None) -> None:
    """secretForTest (stringData holds the same bytes as upstream's data)."""
    body = {"metadata": {"name": name}, "stringData": DATA if data is None else data}
    retry.call(client.CoreV1Api(api).create_namespaced_secret, namespace, body)


def env_pod(target: Target, **fields: Any) -> manifests.Manifest:
    """A busybox container printing its environment, set by `fields` (env=…, envFrom=…).

    Upstream runs `sh -c env`; `env` alone prints the same environment without a shell in between that may
    drop the variables whose names are not shell identifiers (data-1, p-data-1: busybox ash before 1.36 does).
    """
    busybox = manifests.container("env-test", target.image("busybox"), command=["env"], **fields)
    return target.place(manifests.pod("pod-secrets", [busybox], restartPolicy="Never"))


def mounttest_pod(target: Target, secret: str, path: str, **volume: Any) -> manifests.Manifest:
    """The secret mounted at MOUNT; agnhost mounttest prints the content and mode of `path`."""
    volumes = [{"name": VOLUME, "secret": {"secretName": secret, **volume}}]
    mounttest = manifests.container("secret-volume-test", target.image("agnhost"),
                                    args=["mounttest", f"--file_content={path}", f"--file_mode={path}"],
                                    volumeMounts=[manifests.volume_mount(VOLUME, MOUNT)])
    return manifests.pod("pod-secrets", [mounttest], volumes=volumes, restartPolicy="Never")


def expect_content_and_mode(api: client.ApiClient, namespace: str, pod: manifests.Manifest, path: str,
                            mode: int | None) -> None:
    """The placed pod prints value-1 as the content of `path`, and its mode (`mode`, or the OS default)."""
    content = re.escape(f'content of file "{path}": value-1')
    mode_line = container_output.file_mode_regex(path, mode)
    container_output.expect_output(api, namespace, pod, [content, mode_line], regex=True)


def consume_in_volume(api: client.ApiClient, namespace: str, target: Target, *, name: str = "secret-test",
                      mode: int | None = None, fs_group: int | None = None,
                      uid: int | None = None) -> None:
    """doSecretE2EWithoutMapping."""
    create_secret(api, namespace, name)
    path = f"{MOUNT}/data-1"
    pod = mounttest_pod(target, name, path, **({"defaultMode": mode} if mode is not None else {}))
    if fs_group is not None or uid is not None:
        pod["spec"]["securityContext"] = {"fsGroup": fs_group, "runAsUser": uid}
    expect_content_and_mode(api, namespace, target.place(pod), path, mode)


def consume_with_mapping(api: client.ApiClient, namespace: str, target: Target,
                         mode: int | None = None) -> None:
    """doSecretE2EWithMapping."""
    create_secret(api, namespace, "secret-test-map")
    path = f"{MOUNT}/new-path-data-1"
    item = {"key": "data-1", "path": "new-path-data-1", **({"mode": mode} if mode is not None else {})}
    pod = mounttest_pod(target, "secret-test-map", path, items=[item])
    expect_content_and_mode(api, namespace, target.place(pod), path, mode)


@sec_env.it("should be consumable from pods in env vars", NodeConformance, Conformance,
            twin="[sig-node] Secrets should be consumable from pods in env vars [NodeConformance] "
                 "[Conformance]",
            needs=NEEDS, images=["busybox"])
def test_env_var(api: client.ApiClient, namespace: str, target: Target) -> None:
    create_secret(api, namespace, "secret-test")
    ref = {"secretKeyRef": {"name": "secret-test", "key": "data-1"}}
    pod = env_pod(target, env=[{"name": "SECRET_DATA", "valueFrom": ref}])
    container_output.expect_output(api, namespace, pod, ["SECRET_DATA=value-1"])


@sec_env.it("should be consumable via the environment", NodeConformance, Conformance,
            twin="[sig-node] Secrets should be consumable via the environment [NodeConformance] "
                 "[Conformance]",
            needs=NEEDS, images=["busybox"])
def test_env_from(api: client.ApiClient, namespace: str, target: Target) -> None:
    create_secret(api, namespace, "secret-test")
    source = {"secretRef": {"name": "secret-test"}}
    expected = [f"{prefix}{key}={value.strip()}" for prefix in ("", "p-") for key, value in DATA.items()]
    container_output.expect_output(api, namespace, env_pod(target, envFrom=[source, {"prefix": "p-", **source}]),
                                   expected)


@sec_env.it("should fail to create secret due to empty secret key", Conformance,
            twin="[sig-node] Secrets should fail to create secret due to empty secret key [Conformance]")
def test_empty_key(api: client.ApiClient, namespace: str) -> None:
    with pytest.raises(ApiException) as raised:
        create_secret(api, namespace, "secret-emptykey-test", {"": "value-1\n"})
    assert raised.value.status == 422, f"expected 422 Invalid, got {raised.value.status}: {raised.value.body}"


@sec_volume.it("should be consumable from pods in volume", NodeConformance, Conformance,
               twin="[sig-storage] Secrets should be consumable from pods in volume [NodeConformance] "
                    "[Conformance]",
               needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_volume(api: client.ApiClient, namespace: str, target: Target) -> None:
    consume_in_volume(api, namespace, target)


@sec_volume.it("should be consumable from pods in volume with defaultMode set", LinuxOnly, NodeConformance,
               Conformance,
               twin="[sig-storage] Secrets should be consumable from pods in volume with defaultMode set "
                    "[LinuxOnly] [NodeConformance] [Conformance]",
               needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_volume_default_mode(api: client.ApiClient, namespace: str, target: Target) -> None:
    consume_in_volume(api, namespace, target, mode=0o400)


@sec_volume.it("should be consumable from pods in volume as non-root with defaultMode and fsGroup set",
               LinuxOnly, NodeConformance, Conformance,
               twin="[sig-storage] Secrets should be consumable from pods in volume as non-root with "
                    "defaultMode and fsGroup set [LinuxOnly] [NodeConformance] [Conformance]",
               needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_volume_as_non_root_with_fs_group(api: client.ApiClient, namespace: str, target: Target) -> None:
    # fsGroup makes the mode at least 0440.
    consume_in_volume(api, namespace, target, mode=0o440, fs_group=1001, uid=manifests.LINUX_NON_ROOT_UID)


@sec_volume.it("should be consumable from pods in volume with mappings", NodeConformance, Conformance,
               twin="[sig-storage] Secrets should be consumable from pods in volume with mappings "
                    "[NodeConformance] [Conformance]",
               needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_volume_with_mappings(api: client.ApiClient, namespace: str, target: Target) -> None:
    consume_with_mapping(api, namespace, target)


@sec_volume.it("should be consumable from pods in volume with mappings and Item Mode set", LinuxOnly,
               NodeConformance, Conformance,
               twin="[sig-storage] Secrets should be consumable from pods in volume with mappings and Item "
                    "Mode set [LinuxOnly] [NodeConformance] [Conformance]",
               needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_volume_with_mappings_and_mode(api: client.ApiClient, namespace: str, target: Target) -> None:
    consume_with_mapping(api, namespace, target, mode=0o400)


@sec_volume.it("should be able to mount in a volume regardless of a different secret existing with same name "
               "in different namespace", NodeConformance, Conformance,
               twin="[sig-storage] Secrets should be able to mount in a volume regardless of a different "
                    "secret existing with same name in different namespace [NodeConformance] [Conformance]",
               needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_volume_same_name_elsewhere(api: client.ApiClient, namespace: str, target: Target,
                                    cluster: ClusterSession) -> None:
    other = f"secret-namespace-{secrets.token_hex(3)}"
    namespaces.create(api, other, cluster.run_id, target.spec.full_name)
    try:
        name = "secret-test"
        create_secret(api, other, name, {"this_should_not_match_content_of_other_secret":
                                         "similarly_this_should_not_match_content_of_other_secret\n"})
        consume_in_volume(api, namespace, target, name=name)
    finally:
        namespaces.delete(api, other)


@windows_pods(lambda target: [twice_mounted_pod(target)],
              upstream="test/e2e/common/storage/secrets_volume.go:125-160")
@sec_volume.it("should be consumable in multiple volumes in a pod", NodeConformance, Conformance,
               twin="[sig-storage] Secrets should be consumable in multiple volumes in a pod "
                    "[NodeConformance] [Conformance]",
               needs=NEEDS, images=["agnhost"], category="Core.Storage")
def test_volume_twice_in_a_pod(api: client.ApiClient, namespace: str, target: Target) -> None:
    create_secret(api, namespace, "secret-test")
    expect_content_and_mode(api, namespace, twice_mounted_pod(target), f"{MOUNT}/data-1", None)


def twice_mounted_pod(target: Target) -> manifests.Manifest:
    """The secret mounted read-only at two paths of one pod."""
    pod = mounttest_pod(target, "secret-test", f"{MOUNT}/data-1")
    pod["spec"]["volumes"].append({"name": f"{VOLUME}-2", "secret": {"secretName": "secret-test"}})
    for mount in pod["spec"]["containers"][0]["volumeMounts"]:
        mount["readOnly"] = True
    pod["spec"]["containers"][0]["volumeMounts"].append(
        manifests.volume_mount(f"{VOLUME}-2", f"{MOUNT}-2", read_only=True))
    return target.place(pod)
