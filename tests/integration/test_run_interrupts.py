"""SIGINT, SIGTERM and the run timeout, at several points of a run, still leave valid, ABORTED results."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.integration.runner_support import only_build
from tests.integration.runner_support import run_namespaces
from tests.integration.runner_support import start
from tests.integration.runner_support import wait_for_event
from tests.integration.runner_support import wait_for_file
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.errors import ExitCode

pytestmark = pytest.mark.cluster

WAITING = "[sig-testing] winsuite runner waits for a pod that never gets Ready [Slow]"
# Where in the run the signal arrives: right away (still connecting), while the slow test runs (phase 1,
# with results already written), or during the serial phase.
MOMENTS = ("connecting", "during-a-test", "serial-phase")


def _interrupt_at(moment: str, root: Path) -> None:
    if moment == "connecting":
        wait_for_file(root, "started.json", timeout=120)
    elif moment == "during-a-test":
        wait_for_event(root, "junit_01.xml", "attempt", timeout=300,  # a row is written…
                       predicate=lambda event: event["result"]["outcome"] == "passed")
        wait_for_event(root, "junit_01.xml", "start", timeout=300)  # …and a test is running
    elif moment == "serial-phase":
        wait_for_event(root, "junit_02.xml", "start", timeout=600)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("moment", MOMENTS)
def test_an_interrupted_run_writes_aborted_results(cluster: EmbeddedCluster, tmp_path: Path, signum: int,
                                                   moment: str) -> None:
    # Two workers, two tests: one passes at once, the other waits until interrupted.
    extra = ["--focus", "waits alone"] if moment == "serial-phase" else ["--focus", "passes when|waits for a pod"]
    process = start(cluster, tmp_path, *extra)
    try:
        _interrupt_at(moment, tmp_path)
        process.send_signal(signum)
        output, _ = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == ExitCode.INTERRUPTED, output
    build = only_build(tmp_path)
    finished = build.finished
    assert finished["result"] == "ABORTED" and finished["passed"] is False
    assert signal.Signals(signum).name in finished["metadata"]["interrupted"]
    junit = "junit_02.xml" if moment == "serial-phase" else "junit_01.xml"
    if moment != "connecting":
        rows = build.rows(junit)
        interrupted = [r for r in rows if r.properties.get("interrupted") == "true"]
        assert interrupted, f"no row marked interrupted in {junit}: {[(r.name, r.status) for r in rows]}"
        assert all(r.status == "failed" and r.message.startswith(("infrastructure: interrupted",
                                                                   "timeout: interrupted")) for r in interrupted)
    if moment == "during-a-test":
        rows = build.rows(junit)
        assert any(r.status == "passed" for r in rows), "the rows of finished tests are kept"
        assert any(r.name == f"[It] {WAITING}" for r in rows if r.properties.get("interrupted"))
    assert run_namespaces(cluster, finished["metadata"]["run-id"]) == []


def test_the_run_timeout_aborts_the_run(cluster: EmbeddedCluster, tmp_path: Path) -> None:
    """`--run-timeout 30s` ends the run ABORTED with exit code TIMED_OUT, its waiting test's row marked interrupted.
    The wait is the run timeout of 30 s, which the test waiting for a pod that never gets Ready must reach, and the
    deletion of the run's namespaces after it."""
    process = start(cluster, tmp_path, "--focus", "waits for a pod|passes when", "--run-timeout", "30s")
    output, _ = process.communicate(timeout=300)
    assert process.returncode == ExitCode.TIMED_OUT, output
    build = only_build(tmp_path)
    assert build.finished["result"] == "ABORTED"
    assert "run timeout" in build.finished["metadata"]["interrupted"]
    waiting = [r for r in build.rows() if r.name == f"[It] {WAITING}"]
    assert waiting and waiting[-1].properties.get("interrupted") == "true"
    assert run_namespaces(cluster, build.finished["metadata"]["run-id"]) == []
