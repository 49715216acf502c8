"""Each failure class of upstream specs decided by what the run observed, on the embedded cluster with its real node:
an assertion that fails, a spec the per-test timeout cuts off, and the real node's kubelet stopped under a running
spec and a native test at once (it disrupts the cluster, so it runs alone after the other tests). The API server
stopped under a spec: test_api_loss.py, one stop for both engines."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from tests.integration.runner_support import only_build
from tests.integration.runner_support import start
from tests.integration.runner_support import wait_for_event
from tests.integration.test_evidence_run import EVIDENCE_CASES
from tests.integration.test_evidence_run import rows_by_name
from tests.integration.test_evidence_run import run
from tests.integration.test_real_node_stats import node_of
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.cluster.embedded.config import REAL_NODE_NAME
from winsuite.components import images
from winsuite.errors import ExitCode
from winsuite.inputs.images import load_image_catalog
from winsuite.inputs.images import load_repo_list

pytestmark = [pytest.mark.cluster, pytest.mark.real_node]

# Its pod runs `sh -c env` in the busybox image. Given the pause image under busybox's name (a repo list of the test's
# own), the pod fails to start and the spec's assertion that it succeeded fails.
ENV_FROM = "[sig-node] ConfigMap should be consumable via the environment [NodeConformance] [Conformance]"
# Watches its agnhost pod for four minutes, as PROBE watches its busybox one: a spec that runs a while.
AGNHOST_PROBE = ("[sig-node] Probing container should *not* be restarted with a tcp:8080 liveness probe "
                 "[NodeConformance] [Conformance]")
ASSERTION_REGISTRY = "winsuite.local/assertion-case"  # the repo list's promoterE2eRegistry for that run
# Watches its pod for four minutes (a liveness probe that must not restart it): a spec that runs a while.
PROBE = ('[sig-node] Probing container should *not* be restarted with a exec "cat /tmp/health" liveness probe '
         "[NodeConformance] [Conformance]")
PROBE_NAMESPACE = "container-probe-"  # the e2e framework's namespace for it: its base name and a random suffix
RUN_TIMEOUT = 120


def upstream(*names: str, repo_list: Path | None = None) -> tuple[str, ...]:
    """The settings of an upstream run of exactly these specs on the real node, with the cluster's own images (or
    those `repo_list` names)."""
    return ("--engine", "upstream", "--node-os", "linux", "--repo-list", str(repo_list or images.repo_list_file()),
            "--focus", "|".join(re.escape(name) for name in names))


@contextlib.contextmanager
def pause_as_busybox(cluster: EmbeddedCluster, directory: Path) -> Iterator[Path]:
    """A repo list whose promoterE2eRegistry holds the pause image as busybox and the real agnhost, tagged so in the
    real node's containerd while the caller runs; the tags are removed afterwards."""
    catalog = load_image_catalog()
    repo_list = directory / "repo-list.yaml"
    repo_list.write_text(yaml.safe_dump({**yaml.safe_load(images.repo_list_file().read_text()),
                                         "promoterE2eRegistry": ASSERTION_REGISTRY}))
    resolved = load_repo_list(repo_list, catalog)
    tags = {catalog.resolve("busybox", resolved): images.sandbox_image_name(),
            catalog.resolve("agnhost", resolved): images.image_name("agnhost")}
    containerd = node_of(cluster).containerd
    try:
        for tag, image in tags.items():
            tagged = containerd.ctr("images", "tag", "--force", image, tag)
            assert tagged.returncode == 0, tagged.stderr
        yield repo_list
    finally:
        containerd.ctr("images", "rm", *tags)


def probe_namespaces(cluster: EmbeddedCluster) -> set[str]:
    return {ns.metadata.name for ns in client.CoreV1Api(cluster.api).list_namespace().items
            if ns.metadata.name.startswith(PROBE_NAMESPACE)}


def wait_for_probe_pod(cluster: EmbeddedCluster, process: subprocess.Popen[str], earlier: set[str]) -> None:
    """Until the probe spec's pod runs on the real node, in a namespace not among `earlier` ones (the run must still
    be going)."""
    core = client.CoreV1Api(cluster.api)
    deadline = time.monotonic() + 300
    while not any(p.metadata.namespace.startswith(PROBE_NAMESPACE) and p.metadata.namespace not in earlier
                  and p.status.phase == "Running" for p in core.list_pod_for_all_namespaces().items):
        assert time.monotonic() < deadline and process.poll() is None, "the probe spec's pod never ran"
        time.sleep(1)


def wait_for_build_log(root: Path, text: str, process: subprocess.Popen[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not any(text in log.read_text() for log in root.rglob("build-log.txt")):
        assert time.monotonic() < deadline and process.poll() is None, f"no {text!r} in the build log"
        time.sleep(1)


def test_an_upstream_assertion_is_test_and_a_cut_off_spec_is_timeout(real_node: EmbeddedCluster,
                                                                     tmp_path: Path) -> None:
    """An upstream spec whose pod cannot start fails its assertion and is classed test; a spec that watches its pod
    for four minutes is cut off and classed timeout. The wait is e2e.test's start and the per-test timeout of 30 s
    the watching spec must reach."""
    with pause_as_busybox(real_node, tmp_path) as repo_list:
        code, output, build = run(real_node, tmp_path / "results", *upstream(ENV_FROM, AGNHOST_PROBE,
                                                                             repo_list=repo_list),
                                  "--test-timeout", "30s")
    assert code == ExitCode.TESTS_FAILED, output
    rows = rows_by_name(build)
    failed, cut = rows[ENV_FROM][-1], rows[AGNHOST_PROBE][-1]
    assert failed["status"] == "failed" and failed["engine"] == "upstream", failed
    assert failed["message"].startswith("test: ") and "success" in failed["message"], failed
    assert failed["failure-class"] == "test", failed
    assert cut["status"] == "failed" and cut["failure-class"] == "timeout", cut
    assert cut["message"] == "timeout: timed out after 30s (per-test timeout)", cut
    assert "per-test timeout" in cut["failure-evidence"], cut
    assert "Failures by class: 1 timeout, 1 test" in output, output


def test_a_node_lost_mid_test_is_infrastructure_for_a_native_test_and_an_upstream_spec(
        disrupted_cluster: EmbeddedCluster, stoppable_kubelet: int, tmp_path: Path) -> None:
    """One stop of the real node's kubelet under both engines' runs at once (the node's NotReady grace, 40-50 s, is
    the wait): the native test fails when its pod is no longer Ready, the upstream spec (which would watch its pod for
    four minutes) is cut off by its per-test timeout once the node is NotReady; both are classed infrastructure by
    the node's loss. The kubelet goes on as soon as both rows are written, so their clean-ups need not wait."""
    earlier = probe_namespaces(disrupted_cluster)
    native = start(disrupted_cluster, tmp_path / "native", "--cases", EVIDENCE_CASES, "--node-os", "linux",
                   "--focus", "keeps its pod Ready", "--test-timeout", "5m")
    upstream_run = start(disrupted_cluster, tmp_path / "upstream", *upstream(PROBE), "--test-timeout", "80s",
                         cases=None)
    runs = (native, upstream_run)
    try:
        core = client.CoreV1Api(disrupted_cluster.api)
        deadline = time.monotonic() + 300
        while not any(p.status.phase == "Running" for p in core.list_pod_for_all_namespaces(
                field_selector="metadata.name=ready").items):
            assert time.monotonic() < deadline and native.poll() is None, "the native test's pod never ran"
            time.sleep(1)
        wait_for_probe_pod(disrupted_cluster, upstream_run, earlier)
        os.kill(stoppable_kubelet, signal.SIGSTOP)  # the node goes NotReady once its grace period is over
        wait_for_event(tmp_path / "native", "junit_01.xml", "attempt", timeout=300,
                       predicate=lambda event: "test_keeps_ready" in json.dumps(event))
        wait_for_build_log(tmp_path / "upstream", "ran past the per-test timeout", upstream_run, timeout=300)
        os.kill(stoppable_kubelet, signal.SIGCONT)
        outputs = [run.communicate(timeout=600)[0] for run in runs]
    finally:
        for run in runs:
            if run.poll() is None:
                run.kill()
    assert [run.returncode for run in runs] == [ExitCode.TESTS_FAILED] * 2, outputs
    (native_row,) = [rows[-1] for name, rows in rows_by_name(only_build(tmp_path / "native")).items()
                     if "keeps its pod Ready" in name]
    upstream_row = rows_by_name(only_build(tmp_path / "upstream"))[PROBE][-1]
    for row in (native_row, upstream_row):
        assert row["status"] == "failed" and row["failure-class"] == "infrastructure", row
        assert row["failure-evidence"].startswith(f"node {REAL_NODE_NAME} went "), row
        assert row["message"].startswith("infrastructure: "), row
