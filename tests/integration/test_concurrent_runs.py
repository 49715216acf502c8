"""Two runs on one cluster at once: each keeps to its own namespaces, rows and cleanup, and both pass; a run's
Lease counts while its process renews it, and lapses once that process is gone."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from kubernetes import client

from tests.integration.runner_support import only_build
from tests.integration.runner_support import run_namespaces
from tests.integration.runner_support import start
from tests.integration.runner_support import wait_for_file
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.errors import ExitCode
from winsuite.k8s import run_leases
from winsuite.policy.run_config import RunConfig

pytestmark = pytest.mark.cluster

FOCUS = (r"Downward API should provide pod name, namespace and IP address|Pods should get a host IP"
         r"|ConfigMap should be consumable from pods in volume \[NodeConformance\]")
HAND_OFF = "e2e.test namespaces left for the last of the active runs to delete:"


def test_two_concurrent_runs_pass_alike_and_leave_nothing(real_node: EmbeddedCluster, tmp_path: Path) -> None:
    runs = [start(real_node, tmp_path / name, "--cases", "winsuite.cases", "--node-os", "linux", "--focus", FOCUS)
            for name in ("first", "second")]
    run_ids = [RunConfig.load(wait_for_file(tmp_path / name, "run.json", timeout=120)).run_id
               for name in ("first", "second")]
    held = wait_for_leases(real_node, run_ids)
    assert len(held) == 2 and {lease.spec.lease_duration_seconds for lease in held} == {run_leases.KEPT_SECONDS}, held
    outputs = []
    for process in runs:
        try:
            output, _ = process.communicate(timeout=900)
        finally:
            if process.poll() is None:
                process.kill()
        outputs.append(output)
        assert process.returncode == ExitCode.OK, output
    builds = [only_build(tmp_path / name) for name in ("first", "second")]
    verdicts = [sorted((row.name, row.status) for row in build.rows()) for build in builds]
    assert len(verdicts[0]) == 3 and all(status == "passed" for _, status in verdicts[0]), verdicts[0]
    assert verdicts[0] == verdicts[1]
    assert [build.finished["metadata"]["run-id"] for build in builds] == run_ids and run_ids[0] != run_ids[1]
    for run_id in run_ids:
        assert run_namespaces(real_node, run_id) == []
    leases = client.CoordinationV1Api(real_node.api).list_namespaced_lease(run_leases.NAMESPACE)
    assert not [lease.metadata.name for lease in leases.items
                if lease.metadata.name in {run_leases.PREFIX + run_id for run_id in run_ids}]
    # Each run's namespaces were its own: nothing of one run shows up in the other's diagnostics or log, except the
    # line that hands e2e.test's namespace cleanup to the other, still active, run.
    for output, other in zip(outputs, reversed(run_ids), strict=True):
        mentions = [line for line in output.splitlines() if other in line]
        assert all(HAND_OFF in line for line in mentions), mentions


def wait_for_leases(cluster: EmbeddedCluster, run_ids: list[str], timeout: float = 300) -> list[client.V1Lease]:
    """The runs' Leases, once each has one (other tests' runs may hold theirs meanwhile)."""
    names = {run_leases.PREFIX + run_id for run_id in run_ids}
    deadline = time.monotonic() + timeout
    while True:
        leases = [lease for lease in client.CoordinationV1Api(cluster.api).list_namespaced_lease(
            run_leases.NAMESPACE).items if lease.metadata.name in names]
        if len(leases) >= len(names) or time.monotonic() > deadline:
            return leases
        time.sleep(0.5)


def test_a_run_lease_counts_while_renewed_and_lapses_once_its_process_is_gone(cluster: EmbeddedCluster) -> None:
    run_id = f"leasetest{os.getpid()}"
    kept = run_leases.KeptLease(cluster.api, run_id, duration=4, every=1).start()
    try:
        time.sleep(6)  # past the first duration: only the renewals keep it
        assert run_id in run_leases.active_runs(cluster.api)
    finally:
        kept.stop()
    time.sleep(5)  # as when the run's process was killed: no renewal for longer than the duration
    assert run_id not in run_leases.active_runs(cluster.api)
    run_leases.withdraw(cluster.api, run_id)
