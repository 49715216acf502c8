"""Tests whose evidence the runner must judge; run with `winsuite run --cases tests.evidence_cases`: a pod placed
nowhere in particular, and a test that keeps using its node while that node goes away."""

from __future__ import annotations

import time

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import Target
from winsuite.k8s import pods
from winsuite.plugin.session import RunSession

evidence = Describe(Area("sig-testing"), "winsuite evidence")
EXEC_SECONDS = 150.0
EXEC_PATIENCE = 45.0


def linux_busybox(run_session: RunSession) -> str:
    """busybox as the cluster's Linux node has it, whatever OS the run targets."""
    return run_session.resolve_image("busybox", target_os="linux", windows_build=None)


@evidence.it("runs a pod without the target's placement", images=["busybox"])
def test_runs_unplaced(api: client.ApiClient, namespace: str, run_session: RunSession) -> None:
    """Deliberately no nodeSelector, toleration or spec.os: where the scheduler puts it, it runs (the one node that
    runs containers and has no taint is the embedded cluster's Linux node)."""
    busybox = {"name": "busybox", "image": linux_busybox(run_session), "command": ["sh", "-c", "echo ran"]}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "unplaced"},
           "spec": {"containers": [busybox], "restartPolicy": "Never"}}
    pods.create(api, namespace, pod)
    pods.wait_for_pod(api, namespace, "unplaced", state="Succeeded", timeout=120)


@evidence.it("keeps exec-ing into a pod on its node", needs=[Capability.RUNS_CONTAINERS, Capability.EXEC],
           images=["busybox"])
def test_keeps_exec(api: client.ApiClient, namespace: str, target: Target) -> None:
    """Runs for up to EXEC_SECONDS on its node; fails once exec into its pod has failed for EXEC_PATIENCE seconds
    (as a test waiting on its pod would)."""
    busybox = {"name": "busybox", "image": target.image("busybox"), "command": ["sh", "-c", "sleep 3600"]}
    pods.create(api, namespace, target.place({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "execs"},
                                              "spec": {"containers": [busybox]}}))
    pods.wait_for_pod(api, namespace, "execs", state="Running", timeout=120)
    deadline = time.monotonic() + EXEC_SECONDS
    answered = time.monotonic()
    while time.monotonic() < deadline:
        try:
            pods.exec_(api, namespace, "execs", ["true"], timeout=10).check()
            answered = time.monotonic()
        except Exception as err:
            assert time.monotonic() - answered < EXEC_PATIENCE, f"exec into the pod has failed since: {err}"
        time.sleep(2)
