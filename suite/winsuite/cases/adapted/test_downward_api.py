"""Downward API environment variables (test/e2e/common/node/downwardapi.go): pod fields and the container's
resource requests and limits, as the container sees them."""

from __future__ import annotations

import ipaddress
import re
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

dapi = Describe(Area("sig-node"), "Downward API")

POD = "downward-api"
NEEDS = [Capability.RUNS_CONTAINERS, Capability.LOGS]
# What the env var holds must parse as an IP address; the regex only finds it (e2enetwork.RegexIPv4/IPv6).
IP = r"([0-9.]+|[0-9a-fA-F:]*:[0-9a-fA-F:.]*)"
REQUESTS, LIMITS = {"cpu": "250m", "memory": "32Mi"}, {"cpu": "1250m", "memory": "64Mi"}


def env_pod(target: Target, env: list[manifests.Manifest], *, with_resources: bool = True,
            command: str = "env", **spec: Any) -> manifests.Manifest:
    """testDownwardAPI's pod: busybox printing its environment (with requests and limits unless told)."""
    dapi_container = manifests.container("dapi-container", target.image("busybox"),
                                         command=["sh", "-c", command], env=env)
    if with_resources:
        dapi_container["resources"] = manifests.resources(REQUESTS, LIMITS)
    pod = manifests.pod(POD, [dapi_container], labels={"name": POD}, restartPolicy="Never", **spec)
    return target.place(pod)


def environment(api: client.ApiClient, namespace: str, pod: manifests.Manifest,
                expected: list[str]) -> dict[str, str]:
    """TestContainerOutputRegexp: the pod's `env` output matches every regex; return its variables."""
    text = container_output.expect_output(api, namespace, pod, expected, regex=True)["dapi-container"]
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def assert_ip(env: dict[str, str], name: str) -> None:
    ipaddress.ip_address(env[name])  # raises on anything but one IP address


def expect_host_ip(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = env_pod(target, [manifests.env_from_field("HOST_IP", "status.hostIP")])
    assert_ip(environment(api, namespace, pod, [f"HOST_IP={IP}"]), "HOST_IP")


@dapi.it("should provide pod name, namespace and IP address as env vars", NodeConformance, Conformance,
         twin="[sig-node] Downward API should provide pod name, namespace and IP address as env vars "
              "[NodeConformance] [Conformance]",
         needs=NEEDS, images=["busybox"])
def test_pod_name_namespace_ip(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = env_pod(target, [manifests.env_from_field("POD_NAME", "metadata.name"),
                           manifests.env_from_field("POD_NAMESPACE", "metadata.namespace"),
                           manifests.env_from_field("POD_IP", "status.podIP")])
    env = environment(api, namespace, pod, [re.escape(f"POD_NAME={POD}"),
                                            re.escape(f"POD_NAMESPACE={namespace}"), f"POD_IP={IP}"])
    assert_ip(env, "POD_IP")


@dapi.it("should provide host IP as an env var", NodeConformance, Conformance,
         twin="[sig-node] Downward API should provide host IP as an env var [NodeConformance] "
              "[Conformance]",
         needs=NEEDS, images=["busybox"])
def test_host_ip(api: client.ApiClient, namespace: str, target: Target) -> None:
    expect_host_ip(api, namespace, target)


@dapi.it("should provide hostIPs as an env var", NodeConformance, Conformance,
         twin="[sig-node] Downward API should provide hostIPs as an env var [NodeConformance] "
              "[Conformance]",
         needs=NEEDS, images=["busybox"])
def test_host_ips(api: client.ApiClient, namespace: str, target: Target) -> None:
    expect_host_ip(api, namespace, target)  # the twin reads status.hostIP too


@dapi.it("should provide host IP and pod IP as an env var if pod uses host network", LinuxOnly,
         NodeConformance,
         twin="[sig-node] Downward API should provide host IP and pod IP as an env var if pod uses host "
              "network [LinuxOnly] [NodeConformance]",
         needs=NEEDS, images=["busybox"])
def test_host_network_ips(api: client.ApiClient, namespace: str, target: Target) -> None:
    check = ("[[ \"${HOST_IP:?}\" == \"${POD_IP:?}\" ]] && echo 'OK' || "
             "echo \"HOST_IP: '${HOST_IP}' != POD_IP: '${POD_IP}'\"")
    pod = env_pod(target, [manifests.env_from_field("HOST_IP", "status.hostIP"),
                           manifests.env_from_field("POD_IP", "status.podIP")],
                  with_resources=False, command=check, hostNetwork=True)
    environment(api, namespace, pod, ["OK"])


@dapi.it("should provide container's limits.cpu/memory and requests.cpu/memory as env vars",
         NodeConformance, Conformance,
         twin="[sig-node] Downward API should provide container's limits.cpu/memory and "
              "requests.cpu/memory as env vars [NodeConformance] [Conformance]",
         needs=NEEDS, images=["busybox"])
def test_limits_and_requests(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = env_pod(target, [manifests.env_from_resource("CPU_LIMIT", "limits.cpu"),
                           manifests.env_from_resource("MEMORY_LIMIT", "limits.memory"),
                           manifests.env_from_resource("CPU_REQUEST", "requests.cpu"),
                           manifests.env_from_resource("MEMORY_REQUEST", "requests.memory")])
    # CPU rounds up to whole cores: 1250m -> 2, 250m -> 1; memory is in bytes.
    environment(api, namespace, pod, ["CPU_LIMIT=2", "MEMORY_LIMIT=67108864", "CPU_REQUEST=1",
                                      "MEMORY_REQUEST=33554432"])


@dapi.it("should provide default limits.cpu/memory from node allocatable", NodeConformance, Conformance,
         twin="[sig-node] Downward API should provide default limits.cpu/memory from node allocatable "
              "[NodeConformance] [Conformance]",
         needs=NEEDS, images=["busybox"])
def test_default_limits(api: client.ApiClient, namespace: str, target: Target) -> None:
    limits = [manifests.env_from_resource("CPU_LIMIT", "limits.cpu"),
              manifests.env_from_resource("MEMORY_LIMIT", "limits.memory")]
    pod = env_pod(target, limits, with_resources=False)
    environment(api, namespace, pod, ["CPU_LIMIT=[1-9]", "MEMORY_LIMIT=[1-9]"])


@dapi.it("should provide pod UID as env vars", NodeConformance, Conformance,
         twin="[sig-node] Downward API should provide pod UID as env vars [NodeConformance] [Conformance]",
         needs=NEEDS, images=["busybox"])
def test_pod_uid(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = env_pod(target, [manifests.env_from_field("POD_UID", "metadata.uid")])
    uid = "[a-z0-9]{8}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{12}"
    environment(api, namespace, pod, [f"POD_UID={uid}"])
