"""One test per outcome the runner must record; run with `winsuite run --cases tests.runner_cases`."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Serial
from winsuite.authoring.naming import Slow
from winsuite.authoring.target import Target
from winsuite.k8s import pods

runner = Describe(Area("sig-testing"), "winsuite runner")
ATTEMPTS: list[int] = []  # attempts of the flaky test in this worker process


def pending_pod(target: Target, name: str) -> dict[str, Any]:
    """A pod no node can take: it stays Pending, so waiting for it lasts until the deadline."""
    return target.place(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {
                "nodeSelector": {"winsuite.io/no-such-node": "true"},
                "containers": [{"name": "pause", "image": target.image("pause")}],
            },
        }
    )


@runner.it("passes when the API server answers", images=["pause"])
def test_passes(api: client.ApiClient, namespace: str, target: Target) -> None:
    pod = pods.create(api, namespace, pending_pod(target, "passes"))
    assert pod.metadata.namespace == namespace


@runner.it('fails with <b>markup</b> & "quotes" in its name', images=["pause"])
def test_fails(api: client.ApiClient, namespace: str, target: Target) -> None:
    pods.create(api, namespace, pending_pod(target, "fails"))
    assert pods.get(api, namespace, "fails").spec.node_name == "a-node", "deliberate failure <with> & markup"


@runner.it("flakes: fails on the first attempt and passes on the next")
def test_flakes(namespace: str) -> None:
    ATTEMPTS.append(1)
    assert len(ATTEMPTS) > 1, "first attempt fails on purpose"


@runner.it("skips when the cluster lacks what it needs", needs=[Capability.WINDOWS_KERNEL])
def test_skips() -> None:
    raise AssertionError("must have been skipped before running")


@runner.it("waits for a pod that never gets Ready", Slow, images=["pause"])
def test_waits(api: client.ApiClient, namespace: str, target: Target) -> None:
    pods.create(api, namespace, pending_pod(target, "waits"))
    pods.wait_for_pod(api, namespace, "waits", state="Ready", timeout=600)


@runner.it("runs alone in the serial phase", Serial, images=["pause"])
def test_serial(api: client.ApiClient, namespace: str, target: Target) -> None:
    created = pods.create(api, namespace, pending_pod(target, "serial"))
    assert pods.get(api, namespace, "serial").metadata.uid == created.metadata.uid


@runner.it("waits alone for a pod that never gets Ready", Serial, Slow, images=["pause"])
def test_waits_alone(api: client.ApiClient, namespace: str, target: Target) -> None:
    pods.create(api, namespace, pending_pod(target, "waits-alone"))
    pods.wait_for_pod(api, namespace, "waits-alone", state="Ready", timeout=600)


@runner.it("fails after a pod of its own ran on a node", needs=[Capability.RUNS_CONTAINERS], images=["busybox"])
def test_fails_after_a_pod_ran(api: client.ApiClient, namespace: str, target: Target) -> None:
    """The node did work for this test (its kubelet logged it) before the test failed."""
    busybox = {"name": "busybox", "image": target.image("busybox"), "command": ["sh", "-c", "echo ran"]}
    pod = target.place({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ran"},
                        "spec": {"containers": [busybox], "restartPolicy": "Never"}})
    pods.create(api, namespace, pod)
    pods.wait_for_pod(api, namespace, "ran", state="Succeeded", timeout=120)
    raise AssertionError("deliberate failure after a pod ran")

