"""Ready means ready: the controllers the tests rely on are observed working, and one that does not work is named."""

from __future__ import annotations

import os
import signal

import pytest
from kubernetes import client

from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.cluster import readiness

pytestmark = [pytest.mark.cluster]


def probe_namespaces(cluster: EmbeddedCluster) -> list[str]:
    listing = cluster.core.list_namespace(label_selector=readiness.PROBE_LABEL)
    return [ns.metadata.name for ns in listing.items]


def test_every_controller_is_observed_doing_its_job(cluster: EmbeddedCluster) -> None:
    said: list[str] = []

    readiness.wait_for_controllers(cluster.api, said.append)

    assert [line.split(":")[0].strip() for line in said] == [
        f"controller {step.controller}" for step in readiness.STEPS]
    assert probe_namespaces(cluster) == []  # the last step watched it go


def test_a_stopped_controller_manager_is_named_not_waited_for(disrupted_cluster: EmbeddedCluster) -> None:
    manager = disrupted_cluster.target.state().process("kube-controller-manager")
    assert manager is not None
    os.kill(manager.pid, signal.SIGSTOP)  # alive, doing nothing: what a starting, starved controller looks like
    try:
        with pytest.raises(readiness.ControllerNotReady) as raised:
            readiness.wait_for_controllers(disrupted_cluster.api, lambda line: None, step_timeout=5)
    finally:
        os.kill(manager.pid, signal.SIGCONT)

    assert "the serviceaccount controller is not working" in str(raised.value)
    # The probe namespace was left to the namespace controller, which now runs again and removes it.
    core = client.CoreV1Api(disrupted_cluster.api)
    leftover = [ns for ns in core.list_namespace(label_selector=readiness.PROBE_LABEL).items
                if ns.status.phase != "Terminating"]
    assert leftover == []
