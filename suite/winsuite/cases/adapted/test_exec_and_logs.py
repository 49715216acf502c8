"""Exec into a container and read its logs: over the API's websockets (test/e2e/common/node/pods.go) and
with kubectl (test/e2e/kubectl/kubectl.go "Simple pod", logs.go)."""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import time
from pathlib import Path

import pytest
from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Conformance
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import NodeConformance
from winsuite.authoring.target import ClusterSession
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import api_websocket
from winsuite.k8s import manifests
from winsuite.k8s import pods
from winsuite.k8s import probes
from winsuite.k8s import waits

pods_ = Describe(Area("sig-node"), "Pods")
simple_pod = Describe(Area("sig-cli"), "Kubectl client", "Simple pod")
exit_codes = simple_pod.describe("should return command exit codes")
kubectl_logs = Describe(Area("sig-cli"), "Kubectl logs", "logs")

EXEC_NEEDS = [Capability.RUNS_CONTAINERS, Capability.EXEC]
LOGS_NEEDS = [Capability.RUNS_CONTAINERS, Capability.LOGS]
POD_RUNNING_TIMEOUT = "--pod-running-timeout=2m0s"  # framework.PodStartShortTimeout
KUBECTL_TIMEOUT = 180.0
EXEC_TIMEOUT = 60.0
RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


class Kubectl:
    """kubectl against the run's cluster, in the test's namespace (e2ekubectl.RunKubectl)."""

    def __init__(self, cluster: ClusterSession, namespace: str) -> None:
        binary = cluster.facts.kubectl  # PATH's within one minor of the server, else the pinned one winsuite built
        if not binary:
            pytest.skip("requires kubectl: on PATH, or the pinned one `winsuite cluster build` makes (found: none)")
        self.base = [binary, f"--namespace={namespace}"]
        if Path(cluster.kubeconfig).is_file():
            self.base.append(f"--kubeconfig={cluster.kubeconfig}")
        if cluster.context:
            self.base.append(f"--context={cluster.context}")

    def run(self, *args: str, stdin: str = "", check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*self.base, *args], input=stdin, capture_output=True, text=True,
                              timeout=KUBECTL_TIMEOUT, check=False)
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)[:200]} exited {done.returncode}: {done.stderr}")
        return done


@pytest.fixture
def kubectl(cluster: ClusterSession, namespace: str) -> Kubectl:
    return Kubectl(cluster, namespace)


def busybox_pod(target: Target, name: str, command: str) -> manifests.Manifest:
    main = manifests.container("main", target.image("busybox"), command=["/bin/sh", "-c", command])
    return target.place(manifests.restricted(manifests.pod(name, [main]), target.os))


def read_websocket(api: client.ApiClient, path: str, protocol: str) -> bytes:
    """Everything an API websocket sends until it closes (e2ewebsocket.OpenWebSocketForURL), within the time the
    poll it is read in has left."""
    bound = waits.call_timeout()
    deadline = time.monotonic() + bound
    socket = api_websocket.connect(api, path, protocols=protocol, timeout=bound)
    try:  # the server ends the stream with a close frame, after possibly empty messages
        return b"".join(api_websocket.frames(socket, deadline, f"GET {path}"))
    finally:
        api_websocket.close(socket)


@windows_pods(lambda target: [busybox_pod(target, "pod-exec-websocket", "echo container is alive; sleep 600")],
              upstream="test/e2e/common/node/pods.go:540-620")
@pods_.it("should support remote command execution over websockets", NodeConformance, Conformance,
          twin="[sig-node] Pods should support remote command execution over websockets [NodeConformance] "
               "[Conformance]",
          needs=EXEC_NEEDS, images=["busybox"])
def test_exec_over_websockets(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "pod-exec-websocket"
    pods.start(api, namespace, busybox_pod(target, name, "echo container is alive; sleep 600"))

    def exec_echo() -> str:
        result = pods.exec_(api, namespace, name, ["echo", "remote execution test"], container="main")
        detail = f"exit {result.exit_code}, stdout {result.stdout!r}"
        assert "remote execution test" in result.stdout, detail
        return detail

    waits.poll("'remote execution test' from exec over websockets", exec_echo, timeout=EXEC_TIMEOUT)


@windows_pods(lambda target: [busybox_pod(target, "pod-logs-websocket", "echo container is alive; sleep 10000")],
              upstream="test/e2e/common/node/pods.go:622-690")
@pods_.it("should support retrieving logs from the container over websockets", NodeConformance, Conformance,
          twin="[sig-node] Pods should support retrieving logs from the container over websockets "
               "[NodeConformance] [Conformance]",
          needs=LOGS_NEEDS, images=["busybox"])
def test_logs_over_websockets(api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "pod-logs-websocket"
    pods.start(api, namespace, busybox_pod(target, name, "echo container is alive; sleep 10000"))

    def logs_over_websocket() -> bytes:
        # Running says the container started, not that its first line reached the log file yet: read again until
        # it has, and then it must be exactly that line.
        received = read_websocket(api, f"/api/v1/namespaces/{namespace}/pods/{name}/log?container=main",
                                  "binary.k8s.io")
        logs = b"".join(line for line in received.splitlines(keepends=True) if line.strip())
        assert logs == b"container is alive\n", f"unexpected websocket logs: {logs!r}"
        return logs

    waits.poll("the container's log over websockets", logs_over_websocket, timeout=EXEC_TIMEOUT)


@pytest.fixture
def agnhost(kubectl: Kubectl, api: client.ApiClient, namespace: str, target: Target) -> str:
    """The Simple pod's BeforeEach: pod-with-readiness-probe.yaml.in through `kubectl create -f -`, Ready."""
    probe = probes.http_probe("/", 80, initialDelaySeconds=5, timeoutSeconds=5)
    server = manifests.container("agnhost", target.image("agnhost"), args=["netexec", "--http-port=80"],
                                 ports=[{"containerPort": 80}], readinessProbe=probe)
    pod = target.place(manifests.pod("agnhost", [server], labels={"name": "agnhost"}))
    kubectl.run("create", "-f", "-", stdin=json.dumps(pod))
    pods.wait_for_pod(api, namespace, "agnhost", state="Ready", timeout=pods.POD_START_TIMEOUT)
    return "agnhost"


@simple_pod.it("should support exec", twin="[sig-cli] Kubectl client Simple pod should support exec",
               needs=EXEC_NEEDS, images=["agnhost"])
def test_kubectl_exec(kubectl: Kubectl, agnhost: str) -> None:
    out = kubectl.run("exec", POD_RUNNING_TIMEOUT, agnhost, "--", "echo", "running", "in", "container").stdout
    assert out.strip() == "running in container", f"unexpected kubectl exec output: {out!r}"

    very_long = "a" * 20000
    out = kubectl.run("exec", POD_RUNNING_TIMEOUT, agnhost, "--", "echo", very_long).stdout
    assert out.strip() == very_long, f"a very long command came back as {len(out.strip())} characters"

    out = kubectl.run("exec", "-i", POD_RUNNING_TIMEOUT, agnhost, "--", "cat", stdin="abcd1234").stdout
    assert out == "abcd1234", f"noninteractive stdin came back as {out!r}"

    # Pretend to be a user in an interactive shell.
    out = kubectl.run("exec", "-i", POD_RUNNING_TIMEOUT, agnhost, "--", "sh", stdin="echo hi\nexit\n").stdout
    assert out.strip() == "hi", f"pseudo-interactive stdin gave {out!r}"


@simple_pod.it("should support exec using resource/name",
               twin="[sig-cli] Kubectl client Simple pod should support exec using resource/name",
               needs=EXEC_NEEDS, images=["agnhost"])
def test_kubectl_exec_resource_name(kubectl: Kubectl, agnhost: str) -> None:
    out = kubectl.run("exec", POD_RUNNING_TIMEOUT, f"pod/{agnhost}", "--", "echo", "running", "in", "container")
    assert out.stdout.strip() == "running in container", f"unexpected kubectl exec output: {out.stdout!r}"


@exit_codes.it("execing into a container with a successful command",
               twin="[sig-cli] Kubectl client Simple pod should return command exit codes execing into a container "
                    "with a successful command",
               needs=EXEC_NEEDS, images=["agnhost"])
def test_kubectl_exec_exit_zero(kubectl: Kubectl, agnhost: str) -> None:
    kubectl.run("exec", agnhost, POD_RUNNING_TIMEOUT, "--", "/bin/sh", "-c", "exit 0")


@exit_codes.it("execing into a container with a failing command",
               twin="[sig-cli] Kubectl client Simple pod should return command exit codes execing into a container "
                    "with a failing command",
               needs=EXEC_NEEDS, images=["agnhost"])
def test_kubectl_exec_exit_code(kubectl: Kubectl, agnhost: str) -> None:
    done = kubectl.run("exec", agnhost, POD_RUNNING_TIMEOUT, "--", "/bin/sh", "-c", "exit 42", check=False)
    assert done.returncode == 42, f"kubectl exec exited {done.returncode}, not 42: {done.stderr}"


def lines(out: str) -> list[str]:
    return out.rstrip("\n").split("\n")


def is_rfc3339(word: str) -> bool:
    """time.RFC3339 or time.RFC3339Nano, as Go parses them."""
    if not RFC3339.fullmatch(word):
        return False
    try:
        datetime.datetime.fromisoformat(word)
    except ValueError:
        return False
    return True


@kubectl_logs.it("should be able to retrieve and filter logs", Conformance,
                 twin="[sig-cli] Kubectl logs logs should be able to retrieve and filter logs [Conformance]",
                 needs=LOGS_NEEDS, images=["agnhost"])
def test_kubectl_logs(kubectl: Kubectl, api: client.ApiClient, namespace: str, target: Target) -> None:
    name = "logs-generator"  # kubectl run names the container after the pod
    generator = manifests.container(name, target.image("agnhost"),
                                    args=["logs-generator", "--log-lines-total", "100", "--run-duration", "20s"])
    pods.create(api, namespace, target.place(manifests.pod(name, [generator], labels={"run": name},
                                                           restartPolicy="Never")))
    pods.wait_until(api, namespace, name, "to be running and ready, or succeeded",
                    lambda p: pods.is_ready(p) or p.status.phase == "Succeeded",
                    timeout=pods.POD_START_TIMEOUT)

    def logged() -> str:
        out = kubectl.run("logs", name, name).stdout
        detail = out[-500:]
        assert "/api/v1/namespaces/kube-system" in out, detail
        return detail

    waits.poll("a request to /api/v1/namespaces/kube-system in the logs", logged,
               timeout=pods.POD_START_TIMEOUT)

    out = kubectl.run("logs", name, name, "--tail=1").stdout
    assert out and len(lines(out)) == 1, f"--tail=1 gave {out!r}"
    out = kubectl.run("logs", name, name, "--limit-bytes=1").stdout
    assert len(lines(out)) == 1 and len(out) == 1, f"--limit-bytes=1 gave {out!r}"
    out = kubectl.run("logs", name, name, "--tail=1", "--timestamps").stdout
    words = lines(out)[0].split(" ")
    assert len(lines(out)) == 1 and len(words) > 1 and is_rfc3339(words[0]), f"--timestamps gave {out!r}"

    # Upstream sleeps 2.5 s so that the first lines are more than a second old; retrying until they are is
    # the same check without a fixed wait.
    def recent_fewer_than_older() -> str:
        recent = kubectl.run("logs", name, name, "--since=1s").stdout
        older = kubectl.run("logs", name, name, "--since=24h").stdout
        detail = f"recent:\n{recent}\nolder:\n{older}"
        assert len(recent.split("\n")) < len(older.split("\n")), detail
        return detail

    waits.poll("--since=1s to show fewer lines than --since=24h", recent_fewer_than_older, timeout=30)
