"""Tests whose evidence the runner must judge; run with `winsuite run --cases tests.evidence_cases`: a pod placed
nowhere in particular, and a test that relies on its pod while the pod's node goes away."""

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
WATCH_SECONDS = 180.0


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


@evidence.it("keeps its pod Ready on its node", needs=[Capability.RUNS_CONTAINERS], images=["busybox"])
def test_keeps_ready(api: client.ApiClient, namespace: str, target: Target) -> None:
    """Watches its pod stay Ready for up to WATCH_SECONDS: it fails when the pod's node stops answering (the node
    controller then marks the pod not Ready), as a test relying on its pod would."""
    busybox = {"name": "busybox", "image": target.image("busybox"), "command": ["sh", "-c", "sleep 3600"]}
    pods.create(api, namespace, target.place({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ready"},
                                              "spec": {"containers": [busybox]}}))
    pods.wait_for_pod(api, namespace, "ready", state="Ready", timeout=120)
    deadline = time.monotonic() + WATCH_SECONDS
    while time.monotonic() < deadline:
        pod = pods.get(api, namespace, "ready")
        ready = [c for c in pod.status.conditions or [] if c.type == "Ready"]
        assert ready and ready[0].status == "True", f"the pod is no longer Ready: {ready}"
        time.sleep(2)
