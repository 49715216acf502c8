"""The API server going away: runs (native and upstream) that end on their own with their results, a cluster that
`down` stops whatever its API server's state (also under a running run), `up` that never reuses a cluster that does
not serve, and two `up` at once that start one cluster. These take the session's cluster down and up again, so they
run alone after every other test (see conftest.py); the waits are the runs' own run timeout, short here."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from kubernetes import client

from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import apiserver_pid
from tests.integration.runner_support import only_build
from tests.integration.runner_support import run_namespaces
from tests.integration.runner_support import start
from tests.integration.runner_support import wait_for_event
from tests.integration.test_evidence_run import rows_by_name
from tests.integration.test_evidence_upstream import PROBE
from tests.integration.test_evidence_upstream import probe_namespaces
from tests.integration.test_evidence_upstream import upstream
from tests.integration.test_evidence_upstream import wait_for_probe_pod
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.cluster.embedded import leftovers
from winsuite.cluster.embedded.state import ClusterState
from winsuite.components.processes import alive
from winsuite.errors import ExitCode

pytestmark = pytest.mark.cluster

RUN_TIMEOUT = 100.0  # the upstream run's spec has its pod running well within it (e2e.test starts in ~30 s)
FOCUS = ("--focus", "passes when|waits for a pod that never")
WAITING = "[It] [sig-testing] winsuite runner waits for a pod that never gets Ready [Slow]"


def _wait_for_pod(cluster: EmbeddedCluster, name: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not client.CoreV1Api(cluster.api).list_pod_for_all_namespaces(field_selector=f"metadata.name={name}").items:
        assert time.monotonic() < deadline, f"no pod {name} within {timeout:.0f}s"
        time.sleep(0.5)


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WINSUITE, *args], capture_output=True, text=True, timeout=timeout, check=False)


def _up_again(cluster: EmbeddedCluster) -> None:
    up = _cli("cluster", "up", "--name", cluster.name)
    assert up.returncode == 0 and "Traceback" not in up.stdout + up.stderr, up.stdout + up.stderr
    cluster.target.started = True  # the session stops what it (re)started
    cluster.__dict__.pop("api", None)  # a new cluster: new certificates and ports


def test_a_hung_api_server_ends_the_runs_and_down_stops_the_killed_one(disrupted_cluster: EmbeddedCluster,
                                                                       tmp_path: Path) -> None:
    """One stop of the API server under a native run and an upstream one at once: each ends on its own (by its run
    timeout at the latest, its clean-up not waiting on the dead server), its waiting test classed infrastructure by
    the run's own /readyz probes."""
    cluster = disrupted_cluster
    pid = apiserver_pid(cluster)
    earlier = probe_namespaces(cluster)
    native = start(cluster, tmp_path / "hung", *FOCUS, "--run-timeout", f"{RUN_TIMEOUT:.0f}s")
    upstream_run = start(cluster, tmp_path / "upstream", *upstream(PROBE), "--run-timeout", f"{RUN_TIMEOUT:.0f}s",
                         cases=None)
    runs = (native, upstream_run)
    try:
        wait_for_event(tmp_path / "hung", "junit_01.xml", "start", timeout=300,
                       predicate=lambda event: "test_waits" in event["nodeid"])
        _wait_for_pod(cluster, "waits")  # the test is past its setup (its worker connected), in its wait
        wait_for_probe_pod(cluster, upstream_run, earlier)
        os.kill(pid, signal.SIGSTOP)
        stopped_at = time.monotonic()
        output, upstream_output = (run.communicate(timeout=RUN_TIMEOUT + 240)[0] for run in runs)
        took = time.monotonic() - stopped_at
    finally:
        for run in runs:
            if run.poll() is None:
                run.kill()
    assert took < RUN_TIMEOUT + 60, f"the runs took {took:.0f}s after the API server stopped\n{output}"
    assert native.returncode in (ExitCode.TESTS_FAILED, ExitCode.TIMED_OUT), output
    assert upstream_run.returncode in (ExitCode.TESTS_FAILED, ExitCode.TIMED_OUT), upstream_output
    assert "Traceback" not in output + upstream_output, output + upstream_output
    build = only_build(tmp_path / "hung")
    assert build.finished["passed"] is False
    waiting = [row for row in build.rows() if row.name == WAITING]
    assert waiting and waiting[-1].status == "failed", output
    cause = waiting[-1].message
    assert "has not answered" in cause or "run timeout" in cause, cause
    # Observed by the run itself (its /readyz probes), whatever the test's own message says.
    assert waiting[-1].properties["failure-class"] == "infrastructure", waiting[-1].properties
    assert waiting[-1].properties["failure-evidence"].startswith("the API server did not answer from"), output
    assert "cluster.local" not in cause and "winsuite cleanup --run-id" in output, output
    spec = rows_by_name(only_build(tmp_path / "upstream"))[PROBE][-1]
    assert spec["status"] == "failed" and spec["failure-class"] == "infrastructure", spec
    assert spec["failure-evidence"].startswith("the API server did not answer from"), spec

    # Alive but not serving: status says so, and exits as for an unreachable cluster.
    status = _cli("cluster", "status", "--name", cluster.name, timeout=60)
    assert status.returncode == ExitCode.CLUSTER_UNREACHABLE and "not serving" in status.stdout, status.stdout

    # Killed: down stops everything else, with no traceback, and leaves nothing on the host.
    state: ClusterState = cluster.target.state()
    os.kill(pid, signal.SIGKILL)
    down = _cli("cluster", "down", "--name", cluster.name)
    assert down.returncode == 0 and "Traceback" not in down.stdout + down.stderr, down.stdout + down.stderr
    assert leftovers.after_down(cluster.target.layout, state) == []

    # Up again: the same focus passes (and the run leaves no namespace).
    _up_again(cluster)
    rerun = start(cluster, tmp_path / "again", "--focus", "passes when")
    output, _ = rerun.communicate(timeout=300)
    assert rerun.returncode == ExitCode.OK, output
    again = only_build(tmp_path / "again")
    assert [row.status for row in again.rows()] == ["passed"]
    assert run_namespaces(cluster, again.finished["metadata"]["run-id"]) == []


def test_up_replaces_a_cluster_whose_api_server_does_not_serve(disrupted_cluster: EmbeddedCluster) -> None:
    """`cluster up` on a cluster whose API server is alive but answers nothing replaces it, none of the old processes
    left. The wait is `up`'s 10 s of /readyz before it calls the API server not serving, the old cluster's stop, and
    a new cluster's start."""
    cluster = disrupted_cluster
    before = cluster.target.state()
    pid = apiserver_pid(cluster)
    os.kill(pid, signal.SIGSTOP)  # alive, holding its port, answering nothing
    up = _cli("cluster", "up", "--name", cluster.name)
    text = up.stdout + up.stderr
    assert up.returncode == 0 and "Traceback" not in text, text
    assert f"kube-apiserver (pid {pid}) is running but not serving" in text, text
    assert "replacing it" in text, text  # stopped by SIGTERM (with SIGCONT) or, failing that, SIGKILL
    # The new cluster lives in the same directory: what is checked is that none of the old one's processes is left.
    assert [f"{proc.name} (pid {proc.pid})" for proc in before.processes if alive(proc)] == []
    cluster.target.started = True
    cluster.__dict__.pop("api", None)
    assert apiserver_pid(cluster) != pid
    status = _cli("cluster", "status", "--name", cluster.name, timeout=60)
    assert status.returncode == 0 and "not serving" not in status.stdout, status.stdout


def test_down_during_a_run_fails_it_cleanly_and_two_ups_start_one_cluster(disrupted_cluster: EmbeddedCluster,
                                                                           tmp_path: Path) -> None:
    """`cluster down` under a running test fails the run with its results, well within its run timeout; then two
    `cluster up` at once start one cluster, the other reusing it. The wait is the run up to its waiting test, and the
    cluster's start after the down (the second `up` waits for it on the lock)."""
    cluster = disrupted_cluster
    process = start(cluster, tmp_path / "downed", *FOCUS, "--run-timeout", f"{RUN_TIMEOUT:.0f}s")
    try:
        wait_for_event(tmp_path / "downed", "junit_01.xml", "start", timeout=300,
                       predicate=lambda event: "test_waits" in event["nodeid"])
        down = _cli("cluster", "down", "--name", cluster.name)
        downed_at = time.monotonic()
        output, _ = process.communicate(timeout=RUN_TIMEOUT + 240)
        took = time.monotonic() - downed_at
    finally:
        if process.poll() is None:
            process.kill()
    assert down.returncode == 0 and "Traceback" not in down.stdout + down.stderr, down.stdout + down.stderr
    # The run fails with its results written, without a traceback, and without waiting out its run timeout.
    assert process.returncode not in (ExitCode.OK, ExitCode.INTERNAL_ERROR), output
    assert "Traceback" not in output, output
    assert took < RUN_TIMEOUT, f"the run took {took:.0f}s after the cluster went down\n{output}"
    build = only_build(tmp_path / "downed")
    assert build.finished["passed"] is False

    # Two `up` at once: one starts the cluster, the other waits for the lock and reuses it.
    ups = [subprocess.Popen([*WINSUITE, "cluster", "up", "--name", cluster.name], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True) for _ in range(2)]
    texts = [up.communicate(timeout=600)[0] for up in ups]
    assert [up.returncode for up in ups] == [0, 0] and not any("Traceback" in text for text in texts), texts
    joined = "\n".join(texts)
    assert joined.count(f"starting cluster {cluster.name}") == 1, joined
    assert joined.count("reusing it") == 1, joined
    cluster.target.started = True
    cluster.__dict__.pop("api", None)
    status = _cli("cluster", "status", "--name", cluster.name, timeout=60)
    assert status.returncode == 0, status.stdout
