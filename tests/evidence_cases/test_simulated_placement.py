"""A test that needs containers whose pod can only be on a simulated node; run with `winsuite run --cases
tests.evidence_cases`. kwok reports the pod Running without running anything, so the test body passes: the run's
evidence must fail it, naming the node."""

from __future__ import annotations

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.target import ClusterSession
from winsuite.authoring.target import Target
from winsuite.k8s import pods

evidence = Describe(Area("sig-testing"), "winsuite evidence")


@evidence.it("runs its container on the simulated node it is bound to", needs=[Capability.RUNS_CONTAINERS],
             images=["busybox"])
def test_bound_to_a_simulated_node(api: client.ApiClient, namespace: str, target: Target,
                                   cluster: ClusterSession) -> None:
    """Bound by spec.nodeName (no scheduler, so neither the placement's affinity nor a taint keeps it off) to the
    first simulated node of the target OS."""
    node = min(n.name for n in cluster.facts.nodes if n.simulated and n.os == target.os)
    busybox = {"name": "busybox", "image": target.image("busybox"), "command": ["sh", "-c", "sleep 3600"]}
    pod = target.place({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bound"},
                        "spec": {"containers": [busybox], "nodeName": node}})
    pods.create(api, namespace, pod)
    pods.wait_for_pod(api, namespace, "bound", state="Running", timeout=120)
