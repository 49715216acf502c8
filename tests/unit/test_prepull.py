"""Prepull: the DaemonSets it makes, and how it reads their pods' container states (no cluster needed)."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from winsuite.authoring.targeting import OS_LABEL
from winsuite.authoring.targeting import WINDOWS_BUILD_LABEL
from winsuite.authoring.targeting import Placement
from winsuite.policy.prepull_list import ResolvedImage
from winsuite.run.prepull import PullState
from winsuite.run.prepull import container_name
from winsuite.run.prepull import daemon_set
from winsuite.run.prepull import pull_sets

AGNHOST = "registry.k8s.io/e2e-test-images/agnhost:2.63.0"
PAUSE = "registry.k8s.io/pause:3.10.2"
IMAGES = [ResolvedImage("10.0.17763", "agnhost", AGNHOST), ResolvedImage("10.0.20348", "agnhost", AGNHOST),
          ResolvedImage("10.0.20348", "pause", PAUSE)]


def test_one_daemon_set_per_windows_build_placed_like_test_pods() -> None:
    sets = pull_sets("windows", IMAGES)
    assert [(s.name, len(s.images)) for s in sets] == [("prepull-windows-10-0-17763", 1),
                                                        ("prepull-windows-10-0-20348", 2)]
    manifest = daemon_set(sets[1], Placement(target_os="windows"))
    spec = manifest["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {OS_LABEL: "windows", WINDOWS_BUILD_LABEL: "10.0.20348"}
    assert spec["os"] == {"name": "windows"} and spec["tolerations"]
    assert [(c["name"], c["image"], c["imagePullPolicy"]) for c in spec["containers"]] == [
        ("pull-0-agnhost", AGNHOST, "IfNotPresent"), ("pull-1-pause", PAUSE, "IfNotPresent")]
    assert spec["containers"][0]["command"][0] == "cmd.exe"


def test_a_linux_set_has_no_build_and_a_shell_command() -> None:
    (linux,) = pull_sets("linux", [ResolvedImage(None, "pause", PAUSE)])
    assert linux.name == "prepull-linux" and linux.row == "[winsuite] prepull linux images"
    assert daemon_set(linux, Placement(target_os="linux"))["spec"]["template"]["spec"]["containers"][0]["command"][0] \
        == "/bin/sh"


def test_container_names_are_dns_labels() -> None:
    assert container_name(3, "Sample_Apiserver.v2") == "pull-3-sample-apiserver-v2"
    assert len(container_name(1, "x" * 100)) <= 63


def status(name: str, **state: Any) -> client.V1ContainerStatus:
    return client.V1ContainerStatus(name=name, image="", image_id="", ready=False, restart_count=0,
                                    state=client.V1ContainerState(**state))


def pod(node: str, *statuses: client.V1ContainerStatus) -> client.V1Pod:
    return client.V1Pod(spec=client.V1PodSpec(node_name=node, containers=[]),
                        status=client.V1PodStatus(container_statuses=list(statuses)))


def waiting(reason: str, message: str = "") -> client.V1ContainerStateWaiting:
    return client.V1ContainerStateWaiting(reason=reason, message=message)


def test_pulled_failed_and_pending_images_are_told_apart() -> None:
    images = {"pull-0-a": "a:1", "pull-1-b": "b:1", "pull-2-c": "c:1", "pull-3-d": "d:1", "pull-4-e": "e:1"}
    state = PullState(nodes=2)
    state.observe([
        pod("n1", status("pull-0-a", running=client.V1ContainerStateRunning()),
            status("pull-1-b", waiting=waiting("ErrImagePull", "no such host")),
            status("pull-2-c", waiting=waiting("RunContainerError", "no /bin/sh")),
            status("pull-3-d", waiting=waiting("ContainerCreating")),
            status("pull-4-e", terminated=client.V1ContainerStateTerminated(exit_code=0))),
        pod("n2"),  # no status yet
        pod("", status("pull-0-a", running=client.V1ContainerStateRunning())),  # not yet bound: not counted
    ], images)
    assert state.done == {("n1", "a:1"): "", ("n1", "b:1"): "ErrImagePull: no such host", ("n1", "c:1"): "",
                          ("n1", "e:1"): ""}
    assert ("n1", "d:1") in state.pending and {("n2", ref) for ref in images.values()} <= state.pending
    assert state.failures() == ["node n1: image b:1: ErrImagePull: no such host"]
