"""Service environment variables (test/e2e/common/node/pods.go): a pod sees the Services created before it."""

from __future__ import annotations

import uuid
from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import NodeConformance
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import container_output
from winsuite.k8s import manifests
from winsuite.k8s import pods
from winsuite.k8s import services

pods_ = Describe(Area("sig-node"), "Pods")

EXPECTED = ["FOOSERVICE_SERVICE_HOST=", "FOOSERVICE_SERVICE_PORT=", "FOOSERVICE_PORT=",
            "FOOSERVICE_PORT_8765_TCP_PORT=", "FOOSERVICE_PORT_8765_TCP_PROTO=", "FOOSERVICE_PORT_8765_TCP=",
            "FOOSERVICE_PORT_8765_TCP_ADDR="]
ATTEMPTS = 3  # the kubelet may learn of the Service only after the client pod was created


def server_pod(target: Target, name: str) -> dict[str, Any]:
    srv = manifests.container("srv", target.image("agnhost"), ports=[{"containerPort": 9376}])
    return target.place(manifests.restricted(manifests.pod(name, [srv], labels={"name": name}), target.os))


def client_pod(target: Target, name: str) -> dict[str, Any]:
    """The pod that prints its environment, where the Service's variables must be."""
    env = manifests.container("env3cont", target.image("busybox"), command=["sh", "-c", "env"])
    pod = manifests.pod(name, [env], labels={"name": name}, restartPolicy="Never")
    return target.place(manifests.restricted(pod, target.os))


@windows_pods(lambda target: [server_pod(target, "server-envvars-1"), client_pod(target, "client-envvars-1")],
              upstream="test/e2e/common/node/pods.go:448-538")
@pods_.it("should contain environment variables for services", NodeConformance, Conformance,
          twin="[sig-node] Pods should contain environment variables for services [NodeConformance] [Conformance]",
          needs=[Capability.RUNS_CONTAINERS, Capability.LOGS], images=["agnhost", "busybox"],
          category="Core.Network")
def test_service_environment_variables(api: client.ApiClient, namespace: str, target: Target) -> None:
    server = f"server-envvars-{uuid.uuid4()}"
    pods.start(api, namespace, server_pod(target, server), state="Ready")
    # The Service name makes the variables' names, so it cannot be unique to the run.
    services.create(api, namespace, {"metadata": {"name": "fooservice", "labels": {"name": "fooservice"}},
                                     "spec": {"ports": [{"port": 8765, "targetPort": 8080}],
                                              "selector": {"name": server}}})
    failures = []
    for _ in range(ATTEMPTS):
        client_name = f"client-envvars-{uuid.uuid4()}"
        try:
            container_output.expect_output(api, namespace, client_pod(target, client_name), EXPECTED)
            return
        except AssertionError as err:
            failures.append(str(err))
            pods.delete(api, namespace, client_name)
    raise AssertionError(f"the container has no service environment variables after {ATTEMPTS} tries: "
                         f"{failures[-1]}")
