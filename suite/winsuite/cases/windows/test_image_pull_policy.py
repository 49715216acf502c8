"""imagePullPolicy Always, IfNotPresent and Never with the target OS's images (KEP-116 Windows-specific tests).

Upstream has no such test. These follow common/node/runtime.go's "Container Runtime blackbox test when
running a container with a new image" (ImagePullTest: one container that is never restarted, its state and
the pod's phase checked), with the catalog's images resolved for the run's target OS, so that a Windows run
pulls and runs their Windows variants, which is why the KEP asks for these tests. What a policy does is read
from the kubelet's events (pkg/kubelet/images/image_manager.go): `Pulling` before every pull, `Pulled` with
"already present on machine" when the image on the node is used as it is, `ErrImageNeverPull` when Never
meets an absent image.

Where they run: IfNotPresent and Never need no registry. The image is first made present on a node by an
ordinary pod, and the pod under test is placed next to it (pod affinity); an absent image is never fetched
under Never. So these run for real on any node that runs containers, the embedded cluster's Linux node
included. Always must fetch the image from its registry whether or not the node has it, so it needs a
registry the nodes can pull from: it needs Capability.EXTERNAL_NETWORK, and is skipped on the embedded
cluster, whose images are imported, not pulled.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area
from winsuite.authoring.naming import Describe
from winsuite.authoring.naming import Provokes
from winsuite.authoring.target import Target
from winsuite.authoring.windows_pods import windows_pods
from winsuite.k8s import events
from winsuite.k8s import manifests
from winsuite.k8s import pods

pull_policy = Describe(Area("sig-windows"), "Container Runtime", "image pull policy")

Manifest = dict[str, Any]
PRESENT_LABEL = {"winsuite.io/image-present": "true"}
HOSTNAME_LABEL = "kubernetes.io/hostname"
TESTED = "image-pull-test"
EVENT_TIMEOUT = 120.0


def image_pull_pod(target: Target, name: str, image: str, policy: str) -> Manifest:
    """ImagePullTest's ConformanceContainer: one container with the policy, restartPolicy Never."""
    container = manifests.agnhost_container(image, "image-pull-test", imagePullPolicy=policy)
    manifest = manifests.pod(name, [container], restartPolicy="Never", terminationGracePeriodSeconds=0)
    return target.place(manifest)


def next_to_present_image(manifest: Manifest) -> Manifest:
    """Require the node where make_present ran the image: that is the node known to have it."""
    term = {"labelSelector": {"matchLabels": PRESENT_LABEL}, "topologyKey": HOSTNAME_LABEL}
    manifest["spec"]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return manifest


def make_present(api: client.ApiClient, namespace: str, target: Target, image: str) -> None:
    """Run the image once (IfNotPresent: pulled if the node lacks it), so that a node surely has it."""
    pods.start(api, namespace, pull_policy_pods(target, image, "IfNotPresent")[0])


def events_of(api: client.ApiClient, namespace: str, pod: str, reason: str) -> list[str]:
    return [events.describe(e) for e in events.list_events(api, namespace)
            if e.involved_object.name == pod and e.reason == reason]


def assert_runs_present_image_without_pulling(api: client.ApiClient, namespace: str, target: Target,
                                              policy: str) -> None:
    image = target.image("agnhost")
    make_present(api, namespace, target, image)
    pods.start(api, namespace, pull_policy_pods(target, image, policy)[1])
    pulled = events.wait_for_event(api, namespace, involved=TESTED, reason="Pulled", timeout=EVENT_TIMEOUT)
    assert "already present on machine" in (pulled.message or ""), f"{policy}: {events.describe(pulled)}"
    assert not events_of(api, namespace, TESTED, "Pulling"), (
        f"{policy} pulled an image the node had: {events_of(api, namespace, TESTED, 'Pulling')}")


def pull_policy_pods(target: Target, image: str, policy: str) -> list[Manifest]:
    """The pod that makes the image present on a node, and the tested pod next to it."""
    present = image_pull_pod(target, "image-present", image, "IfNotPresent")
    present["metadata"]["labels"] = PRESENT_LABEL
    return [present, next_to_present_image(image_pull_pod(target, TESTED, image, policy))]


@windows_pods(lambda target: pull_policy_pods(target, target.image("agnhost"), "Always"),
              upstream="test/e2e/common/node/runtime.go:270-330 (ImagePullTest)")
@pull_policy.it("should pull the image even when the node has it if the policy is Always",
                needs=[Capability.RUNS_CONTAINERS, Capability.EXTERNAL_NETWORK], images=["agnhost"])
def test_always_pulls(api: client.ApiClient, namespace: str, target: Target) -> None:
    image = target.image("agnhost")
    make_present(api, namespace, target, image)
    pods.start(api, namespace, pull_policy_pods(target, image, "Always")[1])
    events.wait_for_event(api, namespace, involved=TESTED, reason="Pulling", timeout=EVENT_TIMEOUT)
    pulled = events.wait_for_event(api, namespace, involved=TESTED, reason="Pulled", timeout=EVENT_TIMEOUT)
    assert "Successfully pulled" in (pulled.message or ""), f"Always: {events.describe(pulled)}"


@windows_pods(lambda target: pull_policy_pods(target, target.image("agnhost"), "IfNotPresent"),
              upstream="test/e2e/common/node/runtime.go:270-330 (ImagePullTest)")
@pull_policy.it("should run the image the node has without pulling it if the policy is IfNotPresent",
                needs=[Capability.RUNS_CONTAINERS], images=["agnhost"])
def test_if_not_present_uses_present_image(api: client.ApiClient, namespace: str, target: Target) -> None:
    assert_runs_present_image_without_pulling(api, namespace, target, "IfNotPresent")


@windows_pods(lambda target: pull_policy_pods(target, target.image("agnhost"), "Never"),
              upstream="test/e2e/common/node/runtime.go:270-330 (ImagePullTest)")
@pull_policy.it("should run the image the node has without pulling it if the policy is Never",
                needs=[Capability.RUNS_CONTAINERS], images=["agnhost"])
def test_never_uses_present_image(api: client.ApiClient, namespace: str, target: Target) -> None:
    assert_runs_present_image_without_pulling(api, namespace, target, "Never")


@windows_pods(lambda target: [image_pull_pod(target, TESTED, target.image("invalid-registry-image"), "Never")],
              upstream="test/e2e/common/node/runtime.go:270-330 (ImagePullTest)")
@pull_policy.it("should not pull an image the node lacks if the policy is Never",
                needs=[Capability.RUNS_CONTAINERS], images=["invalid-registry-image"],
                provokes=[Provokes.PULL_FAILURES])
def test_never_does_not_pull_absent_image(api: client.ApiClient, namespace: str, target: Target) -> None:
    # The invalid registry's image is on no node and can come from nowhere: Never must not even try.
    absent = target.image("invalid-registry-image")
    pods.create(api, namespace, image_pull_pod(target, TESTED, absent, "Never"))

    def never_pulled(pod: client.V1Pod) -> bool:
        statuses = (pod.status or client.V1PodStatus()).container_statuses or []
        waiting = [s.state.waiting for s in statuses if s.state and s.state.waiting]
        return any(w.reason == "ErrImageNeverPull" for w in waiting)

    pod = pods.wait_until(api, namespace, TESTED, "to wait with ErrImageNeverPull", never_pulled,
                          timeout=pods.POD_START_TIMEOUT)
    phase = (pod.status or client.V1PodStatus()).phase
    assert phase == "Pending", f"expected pod phase Pending, got {phase}: {pods.describe(pod)}"
    refused = events.wait_for_event(api, namespace, involved=TESTED, reason="ErrImageNeverPull",
                                    timeout=EVENT_TIMEOUT)
    assert "is not present with pull policy of Never" in (refused.message or ""), events.describe(refused)
    assert not events_of(api, namespace, TESTED, "Pulling"), events_of(api, namespace, TESTED, "Pulling")
