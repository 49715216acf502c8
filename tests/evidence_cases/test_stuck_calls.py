"""Tests that get stuck, for tests/integration/test_stuck_call.py; run with `winsuite run --cases tests.evidence_cases`:
an exec into a stopped server that never returns (its poll must end it within its own budget), and a test that the
per-test timeout cuts off in a step (its row must say which step and where)."""

from __future__ import annotations

import time

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.steps import step
from winsuite.authoring.target import Target
from winsuite.k8s import pods
from winsuite.k8s import waits

stuck = Describe(Area("sig-testing"), "winsuite stuck calls")
SERVER = "stopped"
PORT = 8080
EXEC_SECONDS = 8.0  # each exec's own bound
POLL_SECONDS = 20.0  # the poll's budget, well inside the per-test timeout the integration test sets
NEVER = 3600.0


def server_pod(target: Target) -> dict[str, object]:
    """netexec under a shell: a pid namespace's init ignores SIGSTOP sent from inside it, its children do not."""
    server = {"name": "server", "image": target.image("agnhost"),
              "command": ["/bin/sh", "-c", f"/agnhost netexec --http-port={PORT} & wait"]}
    return target.place({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": SERVER},
                         "spec": {"containers": [server], "terminationGracePeriodSeconds": 1}})


def ask_hostname(api: client.ApiClient, namespace: str) -> str:
    """GET /hostname from inside the pod: busybox wget waits 15 minutes for an answer that does not come."""
    command = ["wget", "-q", "-O", "-", f"http://127.0.0.1:{PORT}/hostname"]
    return pods.exec_(api, namespace, SERVER, command, timeout=EXEC_SECONDS).check().stdout


@stuck.it("gives up on an exec into a stopped server within its poll's budget",
          needs=[Capability.RUNS_CONTAINERS, Capability.EXEC], images=["agnhost"])
def test_gives_up_on_a_stuck_exec(api: client.ApiClient, namespace: str, target: Target) -> None:
    step("starting a netexec server")
    pods.start(api, namespace, server_pod(target))
    waits.poll("the server to answer", lambda: ask_hostname(api, namespace), timeout=pods.POD_START_TIMEOUT)

    step("stopping the server with SIGSTOP")
    pods.exec_(api, namespace, SERVER, ["/bin/sh", "-c", "kill -STOP $(pidof agnhost)"]).check()

    step("asking the stopped server for its hostname")
    waits.poll("the stopped server to answer", lambda: ask_hostname(api, namespace), timeout=POLL_SECONDS)


@stuck.it("is cut off by the per-test timeout in a step")
def test_cut_off_in_a_step(namespace: str) -> None:
    step(f"creating nothing in namespace {namespace}")
    step("waiting for what never comes")
    time.sleep(NEVER)
