"""The tests' watch helper on the embedded cluster: it resumes from the last resourceVersion without missing a
change, sees a real pod's status changes on the real Linux node, and surfaces a watch error."""

from __future__ import annotations

import time
from typing import Any

import pytest
from kubernetes import client

from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.k8s import manifests
from winsuite.k8s import pods
from winsuite.k8s import waits

pytestmark = [pytest.mark.cluster]

UPDATES = 12


def value_of(config_map: Any) -> str | None:
    return (config_map.data or {}).get("n")


def test_a_resumed_watch_misses_no_change(cluster: EmbeddedCluster, namespace: str) -> None:
    """Twelve updates over about six seconds, watched through one-second requests: every one seen, in order."""
    core = cluster.core
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "counter"}, "data": {"n": "-1"}})
    listing = core.list_namespaced_config_map(namespace)
    seen: list[str | None] = []
    watch = waits.BackgroundWatch(core.list_namespaced_config_map, listing.metadata.resource_version,
                                  violates=lambda cm: seen.append(value_of(cm)), stop_within=1.0,
                                  namespace=namespace)
    with watch:
        for n in range(UPDATES):
            core.patch_namespaced_config_map("counter", namespace, {"data": {"n": str(n)}})
            time.sleep(0.5)
        waits.poll("the last update to be seen", lambda: _assert_seen(seen, str(UPDATES - 1)), timeout=10)
    watch.check("a watch error")
    assert seen == [str(n) for n in range(UPDATES)]


def _assert_seen(seen: list[str | None], last: str) -> None:
    assert seen and seen[-1] == last, f"seen so far: {seen}"


@pytest.mark.real_node
def test_the_watch_sees_a_real_pod_fail_on_the_linux_node(real_node: EmbeddedCluster, namespace: str) -> None:
    """The graceful-shutdown check's watch, on a pod that really runs and fails: a Failed pod is never Ready
    here, and the Failed status itself is seen."""
    core, api = real_node.core, real_node.api
    listing = core.list_namespaced_pod(namespace)
    manifest = manifests.pod("fails", [manifests.container("fails", real_node.image("busybox"),
                                                           command=["sh", "-c", "sleep 2; exit 1"])],
                             restartPolicy="Never")
    manifest["spec"]["nodeSelector"] = {"kubernetes.io/os": "linux"}

    def failed_but_ready(pod: client.V1Pod) -> str | None:
        return pods.describe(pod) if pods.phase_of(pod) == "Failed" and pods.is_ready(pod) else None

    def failed(pod: client.V1Pod) -> str | None:
        return pods.phase_of(pod) if pods.phase_of(pod) == "Failed" else None

    invalid = waits.BackgroundWatch(core.list_namespaced_pod, listing.metadata.resource_version,
                                    violates=failed_but_ready, stop_within=1.0, namespace=namespace)
    failures = waits.BackgroundWatch(core.list_namespaced_pod, listing.metadata.resource_version,
                                     violates=failed, stop_within=1.0, namespace=namespace)
    with invalid, failures:
        pods.create(api, namespace, manifest)
        pods.wait_for_pod(api, namespace, "fails", state="Completed", timeout=120)
        waits.poll("the watch to see the pod fail", lambda: _assert_recorded(failures), timeout=10)
    invalid.check("invalid pod status (Failed while Ready)")
    assert failures.error is None and failures.violations and failures.seen >= 3, \
        f"the watch saw {failures.seen} changes, failures {failures.violations}, error {failures.error}"


def _assert_recorded(watch: waits.BackgroundWatch) -> None:
    assert watch.violations, f"nothing recorded after {watch.seen} changes (error: {watch.error})"


def test_a_watch_error_is_surfaced(cluster: EmbeddedCluster, namespace: str) -> None:
    """A watch the API server refuses (an unsupported field selector) fails the check with the server's words."""
    core = cluster.core
    listing = core.list_namespaced_pod(namespace)
    watch = waits.BackgroundWatch(core.list_namespaced_pod, listing.metadata.resource_version,
                                  violates=lambda _: None, stop_within=1.0, namespace=namespace,
                                  field_selector="spec.noSuchField=x")
    with watch:
        time.sleep(2)
    with pytest.raises(AssertionError, match="watch for a watch error failed: watch failed: 400"):
        watch.check("a watch error")
