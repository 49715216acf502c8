"""Kubelet (test/e2e/common/node/kubelet.go): container output to logs, terminated reasons, hostAliases."""

from __future__ import annotations

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

kubelet = Describe(Area("sig-node"), "Kubelet")
busybox_command = kubelet.describe("when scheduling a busybox command in a pod")
failing_command = kubelet.describe("when scheduling a busybox command that always fails in a pod")
host_aliases = kubelet.describe("when scheduling an agnhost Pod with hostAliases")

LOGS_TIMEOUT = 60.0


def busybox_pod(target: Target, name: str, command: list[str]) -> manifests.Manifest:
    busybox = manifests.container(name, target.image("busybox"), command=command)
    return target.place(manifests.pod(name, [busybox], restartPolicy="Never"))


@busybox_command.it("should print the output to logs", NodeConformance, Conformance,
                    twin="[sig-node] Kubelet when scheduling a busybox command in a pod should print the "
                         "output to logs [NodeConformance] [Conformance]",
                    needs=[Capability.RUNS_CONTAINERS, Capability.LOGS], images=["busybox"])
def test_output_to_logs(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "busybox-scheduling"
    command = ["sh", "-c", "echo 'Hello World' ; sleep 240"]
    pods.start(api, namespace, busybox_pod(target, name, command))
    # Upstream asks for the logs since an hour ago (sinceTime); sinceSeconds says the same.
    container_output.wait_for_logs(api, namespace, name, name, what="exactly 'Hello World'",
                                   matches=lambda text: text == "Hello World\n", timeout=LOGS_TIMEOUT,
                                   since_seconds=3600)


@failing_command.it("should have an terminated reason", NodeConformance, Conformance,
                    twin="[sig-node] Kubelet when scheduling a busybox command that always fails in a pod "
                         "should have an terminated reason [NodeConformance] [Conformance]",
                    needs=[Capability.RUNS_CONTAINERS], images=["busybox"])
def test_terminated_reason(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "bin-false"
    pods.create(api, namespace, busybox_pod(target, name, ["/bin/false"]))

    def terminated_with_reason(pod: client.V1Pod) -> bool:
        statuses = pod.status.container_statuses or []
        terminated = statuses[0].state.terminated if len(statuses) == 1 else None
        return terminated is not None and terminated.exit_code != 0 and bool(terminated.reason)

    pods.wait_until(api, namespace, name, "to have its only container terminated, non-zero, with a reason",
                    terminated_with_reason, timeout=pods.POD_START_TIMEOUT)


@failing_command.it("should be possible to delete", NodeConformance, Conformance,
                    twin="[sig-node] Kubelet when scheduling a busybox command that always fails in a pod "
                         "should be possible to delete [NodeConformance] [Conformance]",
                    needs=[Capability.RUNS_CONTAINERS], images=["busybox"])
def test_delete_failing_pod(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "bin-false"
    # The twin deletes whatever state the pod is in; deleting it once its command has failed is the case
    # the name describes.
    pods.start(api, namespace, busybox_pod(target, name, ["/bin/false"]), state="Failed")
    pods.delete(api, namespace, name)
    pods.wait_for_no_pods(api, namespace, what=f"pod {namespace}/{name} to be gone")


@host_aliases.it("should write entries to /etc/hosts", NodeConformance, Conformance,
                 twin="[sig-node] Kubelet when scheduling an agnhost Pod with hostAliases should write "
                      "entries to /etc/hosts [NodeConformance] [Conformance]",
                 needs=[Capability.RUNS_CONTAINERS, Capability.LOGS], images=["agnhost"])
def test_host_aliases(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "agnhost-host-aliases"
    pod = manifests.agnhost_pod(target.image("agnhost"), name, "etc-hosts", restartPolicy="Never",
                                hostAliases=[{"ip": "123.45.67.89", "hostnames": ["foo", "bar"]}])
    pods.start(api, namespace, target.place(pod), state="Completed")
    hosts = pods.logs(api, namespace, name)
    assert "123.45.67.89\tfoo\tbar" in hosts, f"expected the HostAliases in the hosts file, got:\n{hosts}"
