"""Variable Expansion (test/e2e/common/node/expansion.go): $(VAR) in env values, commands and args."""

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

expansion = Describe(Area("sig-node"), "Variable Expansion")


def expansion_pod(target: Target, command: list[str], env: list[manifests.Manifest],
                  args: list[str] | None = None) -> manifests.Manifest:
    """newPod: one busybox container, dapi-container, that runs once."""
    dapi = manifests.container("dapi-container", target.image("busybox"), command=command, args=args,
                               env=env)
    return target.place(manifests.pod("var-expansion", [dapi], labels={"name": "var-expansion"},
                                      restartPolicy="Never"))


@expansion.it("should allow composing env vars into new env vars", NodeConformance, Conformance,
              twin="[sig-node] Variable Expansion should allow composing env vars into new env vars "
                   "[NodeConformance] [Conformance]",
              needs=[Capability.RUNS_CONTAINERS, Capability.LOGS], images=["busybox"])
def test_compose_env_vars(api: client.ApiClient, namespace: str, target: Target) -> None:
    env = [{"name": "FOO", "value": "foo-value"}, {"name": "BAR", "value": "bar-value"},
           {"name": "FOOBAR", "value": "$(FOO);;$(BAR)"}]
    container_output.expect_output(api, namespace, expansion_pod(target, ["sh", "-c", "env"], env),
                                   ["FOO=foo-value", "BAR=bar-value", "FOOBAR=foo-value;;bar-value"])


@expansion.it("should allow substituting values in a container's command", NodeConformance, Conformance,
              twin="[sig-node] Variable Expansion should allow substituting values in a container's command "
                   "[NodeConformance] [Conformance]",
              needs=[Capability.RUNS_CONTAINERS, Capability.LOGS], images=["busybox"])
def test_substitute_in_command(api: client.ApiClient, namespace: str, target: Target) -> None:
    env = [{"name": "TEST_VAR", "value": "test-value"}]
    pod = expansion_pod(target, ["sh", "-c", 'TEST_VAR=wrong echo "$(TEST_VAR)"'], env)
    container_output.expect_output(api, namespace, pod, ["test-value"])


@expansion.it("should allow substituting values in a container's args", NodeConformance, Conformance,
              twin="[sig-node] Variable Expansion should allow substituting values in a container's args "
                   "[NodeConformance] [Conformance]",
              needs=[Capability.RUNS_CONTAINERS, Capability.LOGS], images=["busybox"])
def test_substitute_in_args(api: client.ApiClient, namespace: str, target: Target) -> None:
    env = [{"name": "TEST_VAR", "value": "test-value"}]
    pod = expansion_pod(target, ["sh", "-c"], env, args=['TEST_VAR=wrong echo "$(TEST_VAR)"'])
    container_output.expect_output(api, namespace, pod, ["test-value"])
