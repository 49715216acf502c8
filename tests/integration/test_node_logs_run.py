"""Node logs after a failing run on the embedded cluster: the real node's kubelet, containerd and kube-proxy logs
of the run's window, through the kubelet's node log query; simulated nodes say why they have none."""

from __future__ import annotations

import datetime
import subprocess
from pathlib import Path

import pytest

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import only_build
from tests.integration.runner_support import run_args
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.errors import ExitCode
from winsuite.run.node_logs import KLOG_TIME

pytestmark = [pytest.mark.cluster, pytest.mark.real_node]


def test_a_failing_run_collects_the_real_node_logs_of_its_window(real_node: EmbeddedCluster, tmp_path: Path) -> None:
    done = subprocess.run(run_args(real_node, tmp_path, "--node-os", "linux", "--focus", "fails after a pod"),
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == ExitCode.TESTS_FAILED, output
    build = only_build(tmp_path)
    nodes = build.path / "artifacts" / "nodes"
    assert build.finished["metadata"]["node-logs"] == "artifacts/nodes/"
    kubelet = (nodes / "linux-0" / "kubelet.log").read_text()
    stamps = [m for line in kubelet.splitlines() if (m := KLOG_TIME.match(line))]
    assert stamps, f"no kubelet log line collected:\n{output}"
    started = datetime.datetime.fromtimestamp(build.started["timestamp"], datetime.UTC)
    finished = datetime.datetime.fromtimestamp(build.finished["timestamp"], datetime.UTC)
    for m in stamps:
        month, day, hour, minute, second = (int(g) for g in m.groups()[:5])
        moment = datetime.datetime(started.year, month, day, hour, minute, second, tzinfo=datetime.UTC)
        assert started - datetime.timedelta(seconds=1) <= moment <= finished, m.group(0)
    assert (nodes / "linux-0" / "containerd.log").stat().st_size > 0
    report = (nodes / "linux-0" / "collection.txt").read_text()
    assert "collected: kubelet.log" in report and "collected: kube-proxy.log" in report, report
    simulated = (nodes / "win2022-0" / "collection.txt").read_text()
    assert "not collected: every service: a simulated (kwok) node" in simulated
    assert "node logs of linux-0: kubelet.log, containerd.log, kube-proxy.log" in output


def test_a_passing_run_collects_none_unless_asked(real_node: EmbeddedCluster, tmp_path: Path) -> None:
    done = subprocess.run(run_args(real_node, tmp_path, "--node-os", "linux", "--focus", "passes when"),
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert not (only_build(tmp_path).path / "artifacts" / "nodes").exists()
