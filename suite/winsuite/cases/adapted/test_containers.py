"""Containers (test/e2e/common/node/containers.go): the image's entrypoint and cmd, and overriding them."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import NodeConformance
from winsuite.authoring.target import Target
from winsuite.k8s import container_output
from winsuite.k8s import manifests
from winsuite.k8s import pods

containers_ = Describe(Area("sig-node"), "Containers")


def entrypoint_test_pod(target: Target, *args: str, command: list[str] | None = None) -> dict[str, Any]:
    """entrypointTestPod: agnhost (entrypoint /agnhost, cmd pause) with the given args and command."""
    pod = manifests.agnhost_pod(target.image("agnhost"), "client-containers", *args,
                                terminationGracePeriodSeconds=1, restartPolicy="Never")
    agnhost = pod["spec"]["containers"][0]
    if not args:
        del agnhost["args"]
    if command is not None:
        agnhost["command"] = command
    return target.place(pod)


@containers_.it("should use the image defaults if command and args are blank", NodeConformance, Conformance,
                twin="[sig-node] Containers should use the image defaults if command and args are blank "
                     "[NodeConformance] [Conformance]",
                needs=[Capability.RUNS_CONTAINERS, Capability.LOGS], images=["agnhost"])
def test_image_defaults(api: client.ApiClient, namespace: str, target: Target) -> None:
    pods.start(api, namespace, entrypoint_test_pod(target))
    container_output.wait_for_logs(api, namespace, "client-containers", "agnhost-container", what="Paused",
                                   matches=lambda text: "Paused" in text, timeout=60)


@containers_.it("should be able to override the image's default arguments (container cmd)", NodeConformance,
                Conformance,
                twin="[sig-node] Containers should be able to override the image's default arguments "
                     "(container cmd) [NodeConformance] [Conformance]",
                needs=[Capability.RUNS_CONTAINERS, Capability.LOGS], images=["agnhost"])
def test_override_arguments(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = entrypoint_test_pod(target, "entrypoint-tester", "override", "arguments")
    container_output.expect_output(api, namespace, pod, ["[/agnhost entrypoint-tester override arguments]"])


@containers_.it("should be able to override the image's default command (container entrypoint)",
                NodeConformance, Conformance,
                twin="[sig-node] Containers should be able to override the image's default command "
                     "(container entrypoint) [NodeConformance] [Conformance]",
                needs=[Capability.RUNS_CONTAINERS, Capability.LOGS], images=["agnhost"])
def test_override_command(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = entrypoint_test_pod(target, "entrypoint-tester", command=["/agnhost-2"])
    container_output.expect_output(api, namespace, pod, ["[/agnhost-2 entrypoint-tester]"])


@containers_.it("should be able to override the image's default command and arguments", NodeConformance,
                Conformance,
                twin="[sig-node] Containers should be able to override the image's default command and "
                     "arguments [NodeConformance] [Conformance]",
                needs=[Capability.RUNS_CONTAINERS, Capability.LOGS], images=["agnhost"])
def test_override_command_and_arguments(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = entrypoint_test_pod(target, "entrypoint-tester", "override", "arguments", command=["/agnhost-2"])
    container_output.expect_output(api, namespace, pod, ["[/agnhost-2 entrypoint-tester override arguments]"])
