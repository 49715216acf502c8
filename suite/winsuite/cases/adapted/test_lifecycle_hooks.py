"""Container Lifecycle Hook (test/e2e/common/node/lifecycle_hook.go): postStart and preStop, exec and HTTP.

A handler pod (agnhost netexec) logs every request; each hook calls it, and the test finds the call in its
logs.
"""

from __future__ import annotations

import dataclasses
import re
import urllib.parse
from typing import Any

import pytest
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

hooks = Describe(Area("sig-node"), "Container Lifecycle Hook", "when create a pod with lifecycle hook")

HANDLER, HANDLER_CONTAINER = "pod-handle-http-request", "container-handle-http-request"
POST_START_TIMEOUT = 120.0
PRE_STOP_TIMEOUT = 30.0
POD_DELETE_TIMEOUT = 120.0
NEEDS = [Capability.RUNS_CONTAINERS, Capability.LOGS]


@dataclasses.dataclass(frozen=True)
class Handler:
    """The running pod that handles the hooks' requests."""

    ip: str
    node: str

    @property
    def url_host(self) -> str:
        return f"[{self.ip}]" if ":" in self.ip else self.ip


@pytest.fixture
def handler(api: client.ApiClient, namespace: str, target: Target) -> Handler:
    """BeforeEach: create the handler pod and wait for it to run."""
    netexec = manifests.agnhost_container(target.image("agnhost"), HANDLER_CONTAINER, "netexec")
    pod = manifests.pod(HANDLER, [netexec], terminationGracePeriodSeconds=0)
    running = pods.start(api, namespace, target.place(pod))
    return Handler(running.status.pod_ip, running.spec.node_name)


def pod_with_hook(target: Target, name: str, image: str, lifecycle: dict[str, Any]) -> manifests.Manifest:
    """getPodWithHook, plus upstream's netexec sidecar that HTTP hooks go through (its startup probe starts
    it before the hooked container)."""
    startup = {"httpGet": {"scheme": "HTTP", "path": "/echo?msg=startup", "port": 8080}}
    sidecar = manifests.agnhost_container(target.image("agnhost"), "container-redirect", "netexec",
                                          "--udp-port", "-1", restartPolicy="Always", startupProbe=startup)
    hooked = manifests.container(name, image, lifecycle=lifecycle)
    return target.place(manifests.pod(name, [hooked], labels={"hooked": name}, initContainers=[sidecar]))


def on_handler_node(pod: manifests.Manifest, handler: Handler) -> manifests.Manifest:
    """HTTP hooks run on the handler's node, as upstream places them."""
    return manifests.node_affinity(pod, handler.node)


def exec_hook(handler: Handler, message: str) -> dict[str, Any]:
    url = f"http://{handler.url_host}:8080/echo?msg={message}"
    # curl, as upstream; an agnhost built without curl (the embedded cluster's) has busybox's wget instead.
    return {"exec": {"command": ["sh", "-c", f"curl {url} || wget -q -O- '{url}'"]}}


def http_hook(handler: Handler, message: str) -> dict[str, Any]:
    """netexecConnect: the hook pod's own netexec (port 8080) dials the handler with the request."""
    request = urllib.parse.quote_plus(f"echo?msg={message}")
    return {"httpGet": {"path": f"/dial?host={handler.ip}&port=8080&request={request}", "port": 8080}}


def wait_for_call(api: client.ApiClient, namespace: str, message: str, timeout: float) -> None:
    pattern = re.compile(rf"GET /echo\?msg={message}")
    container_output.wait_for_logs(api, namespace, HANDLER, HANDLER_CONTAINER, what=f"GET /echo?msg={message}",
                                   matches=lambda text: pattern.search(text) is not None, timeout=timeout)


def check_pod_with_hook(api: client.ApiClient, namespace: str, pod: manifests.Manifest) -> None:
    """testPodWithHook: the hooked pod runs and its postStart call arrives; once it is deleted, its preStop
    call has arrived."""
    lifecycle, name = pod["spec"]["containers"][0]["lifecycle"], pod["metadata"]["name"]
    pods.start(api, namespace, pod)
    if "postStart" in lifecycle:
        wait_for_call(api, namespace, "poststart", POST_START_TIMEOUT)
    pods.delete(api, namespace, name, grace_seconds=15)
    pods.wait_for_no_pods(api, namespace, label_selector=f"hooked={name}",
                          what=f"pod {name} to be deleted", timeout=POD_DELETE_TIMEOUT)
    if "preStop" in lifecycle:
        wait_for_call(api, namespace, "prestop", PRE_STOP_TIMEOUT)


@hooks.it("should execute poststart exec hook properly", NodeConformance, Conformance,
          twin="[sig-node] Container Lifecycle Hook when create a pod with lifecycle hook should execute "
               "poststart exec hook properly [NodeConformance] [Conformance]",
          needs=NEEDS, images=["agnhost"])
def test_poststart_exec_hook(api: client.ApiClient, namespace: str, target: Target, handler: Handler) -> None:
    lifecycle = {"postStart": exec_hook(handler, "poststart")}
    pod = pod_with_hook(target, "pod-with-poststart-exec-hook", target.image("agnhost"), lifecycle)
    check_pod_with_hook(api, namespace, pod)


@hooks.it("should execute prestop exec hook properly", NodeConformance, Conformance,
          twin="[sig-node] Container Lifecycle Hook when create a pod with lifecycle hook should execute "
               "prestop exec hook properly [NodeConformance] [Conformance]",
          needs=NEEDS, images=["agnhost"])
def test_prestop_exec_hook(api: client.ApiClient, namespace: str, target: Target, handler: Handler) -> None:
    lifecycle = {"preStop": exec_hook(handler, "prestop")}
    pod = pod_with_hook(target, "pod-with-prestop-exec-hook", target.image("agnhost"), lifecycle)
    check_pod_with_hook(api, namespace, pod)


@hooks.it("should execute poststart http hook properly", NodeConformance, Conformance,
          twin="[sig-node] Container Lifecycle Hook when create a pod with lifecycle hook should execute "
               "poststart http hook properly [NodeConformance] [Conformance]",
          needs=NEEDS, images=["agnhost", "pause"])
def test_poststart_http_hook(api: client.ApiClient, namespace: str, target: Target, handler: Handler) -> None:
    lifecycle = {"postStart": http_hook(handler, "poststart")}
    pod = pod_with_hook(target, "pod-with-poststart-http-hook", target.image("pause"), lifecycle)
    check_pod_with_hook(api, namespace, on_handler_node(pod, handler))


@hooks.it("should execute prestop http hook properly", NodeConformance, Conformance,
          twin="[sig-node] Container Lifecycle Hook when create a pod with lifecycle hook should execute "
               "prestop http hook properly [NodeConformance] [Conformance]",
          needs=NEEDS, images=["agnhost", "pause"])
def test_prestop_http_hook(api: client.ApiClient, namespace: str, target: Target, handler: Handler) -> None:
    lifecycle = {"preStop": http_hook(handler, "prestop")}
    pod = pod_with_hook(target, "pod-with-prestop-http-hook", target.image("pause"), lifecycle)
    check_pod_with_hook(api, namespace, on_handler_node(pod, handler))
