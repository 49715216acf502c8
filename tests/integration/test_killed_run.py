"""Nothing outlives a killed run: `winsuite run` killed with SIGKILL while its tests run takes every process it started
along within seconds (its pytest phase, the xdist workers, and their tether), no namespace of it appears after, and
`winsuite cleanup` then removes what it held outside its namespaces (its Lease; the placement policy and LoadBalancer
probe a run leaves when killed during its upstream phase or its discovery) and says so; on the embedded cluster and on
a user's (kwokctl's, reached only through its kubeconfig). Without a run id, cleanup tells a dead run by its Lease
having run out."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from kubernetes import client

from tests.integration.runner_support import CLUSTERS
from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import ReachedCluster
from tests.integration.runner_support import asked_cluster
from tests.integration.runner_support import start
from tests.integration.runner_support import target_os
from tests.integration.runner_support import wait_for_file
from tests.tools.embedded_cluster import EmbeddedCluster
from tests.tools.proc_table import descendants
from tests.tools.proc_table import still_running
from tests.tools.proc_table import wait_until
from winsuite.cluster import load_balancer
from winsuite.k8s import run_leases
from winsuite.k8s.namespaces import RUN_ID_LABEL
from winsuite.policy.run_config import RunConfig
from winsuite.run.engines import placement_policy
from winsuite.run.engines.tether import WATCHER_NAME

pytestmark = pytest.mark.cluster

# Two workers: one test waits ten minutes for a pod, the others would make namespaces after it (a serial one too).
FOCUS = r"waits for a pod that never|passes when|fails with|flakes|runs alone in the serial phase"
# The embedded job's skip, given to both: a user's cluster's default job skips [Slow] and [Serial] too, which would
# leave out the test that waits and the serial one.
SKIP = r"\[Flaky\]"
GONE_WITHIN = 5.0


@pytest.fixture(params=CLUSTERS)
def any_cluster(request: pytest.FixtureRequest) -> ReachedCluster:
    return asked_cluster(request)


def run_namespaces(cluster: ReachedCluster, run_id: str) -> set[str]:
    listed = client.CoreV1Api(cluster.api).list_namespace(label_selector=f"{RUN_ID_LABEL}={run_id}")
    return {ns.metadata.name for ns in listed.items}


def test_a_killed_run_leaves_no_process_and_cleanup_removes_what_it_held(any_cluster: ReachedCluster,
                                                                          tmp_path: Path) -> None:
    process = start(any_cluster, tmp_path, "--node-os", target_os(any_cluster), "--focus", FOCUS, "--skip", SKIP)
    try:
        started = wait_for_file(tmp_path, "started.json", timeout=60)
        run = RunConfig.load(started.parent / "artifacts" / "run.json")
        assert wait_until(lambda: run_namespaces(any_cluster, run.run_id), 90, interval=0.5), "no namespace appeared"
        lease = client.CoordinationV1Api(any_cluster.api).read_namespaced_lease(run_leases.PREFIX + run.run_id,
                                                                                  run_leases.NAMESPACE)
        assert lease.spec.lease_duration_seconds == run_leases.KEPT_SECONDS == 30
        tree = descendants(process.pid)
        process.kill()
        process.wait()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    names = sorted(seen.name for seen in tree.values())
    assert names.count(WATCHER_NAME) == 1 and len(names) >= 4, names  # the phase, its two workers, its tether
    assert wait_until(lambda: not still_running(tree), GONE_WITHIN), \
        f"still running {GONE_WITHIN:.0f}s after the kill: {still_running(tree)}"
    namespaces = run_namespaces(any_cluster, run.run_id)
    time.sleep(3)  # a test still running anywhere would make the next namespace by now
    assert run_namespaces(any_cluster, run.run_id) == namespaces

    # What a run killed in its upstream phase or during its LoadBalancer probe leaves besides its Lease.
    assert placement_policy.install(any_cluster.api, run.run_id, run.placement)
    probe = f"{load_balancer.PROBE_PREFIX}{run.run_id[-6:]}"
    client.CoreV1Api(any_cluster.api).create_namespaced_service(
        load_balancer.PROBE_NAMESPACE, load_balancer.probe_service(probe, run.run_id))
    done = subprocess.run([*WINSUITE, "cleanup", "--kubeconfig", str(any_cluster.kubeconfig), "--run-id",
                           run.run_id], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stdout.splitlines()
    for removed in (f"deleted Lease {run_leases.NAMESPACE}/{run_leases.PREFIX}{run.run_id} (run {run.run_id})",
                    f"deleted MutatingAdmissionPolicy {placement_policy.name_of(run.run_id)} and its binding "
                    f"(run {run.run_id})",
                    f"deleted Service {load_balancer.PROBE_NAMESPACE}/{probe} (run {run.run_id})"):
        assert removed in said, done.stdout
    assert [line for line in said if line.startswith("deleted namespace ")], done.stdout
    selector = f"{RUN_ID_LABEL}={run.run_id}"
    assert not client.CoordinationV1Api(any_cluster.api).list_namespaced_lease(run_leases.NAMESPACE,
                                                                                label_selector=selector).items
    assert run.run_id not in placement_policy.placed_runs(any_cluster.api)
    assert run.run_id not in load_balancer.runs_probes(client.CoreV1Api(any_cluster.api)).values()


def test_cleanup_removes_the_leases_that_ran_out_and_leaves_a_renewed_one_alone(cluster: EmbeddedCluster) -> None:
    dead, alive = f"lapsed{os.getpid()}", f"renewed{os.getpid()}"
    run_leases.KeptLease(cluster.api, dead, duration=1).start().stop()  # as a killed run's: never renewed
    kept = run_leases.KeptLease(cluster.api, alive).start()
    try:
        time.sleep(2)
        done = subprocess.run([*WINSUITE, "cleanup", "--kubeconfig", str(cluster.kubeconfig)], cwd=PROJECT_ROOT,
                              capture_output=True, text=True, timeout=120, check=False)
    finally:
        kept.stop()
        run_leases.withdraw(cluster.api, alive)
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stdout.splitlines()
    assert f"deleted Lease {run_leases.NAMESPACE}/{run_leases.PREFIX}{dead} (run {dead})" in said, done.stdout
    assert [line for line in said if alive in line] == [
        f"left alone: run {alive}, which is active (its Lease {run_leases.NAMESPACE}/{run_leases.PREFIX}{alive} has "
        "not run out)"], done.stdout
