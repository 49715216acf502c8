"""`winsuite cluster` through the front door, on a second, simulated-only cluster beside the session's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.cluster.embedded import leftovers
from winsuite.cluster.embedded.state import Layout
from winsuite.cluster.embedded.state import load
from winsuite.components.processes import wait_exit
from winsuite.errors import ExitCode
from winsuite.inputs.pins import load_pins

pytestmark = pytest.mark.cluster


def winsuite(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-c", "import sys; from winsuite.cli import main; sys.exit(main())", *args]
    return subprocess.run(
        argv, capture_output=True, text=True, check=False, timeout=600, env=dict(os.environ)
    )


@pytest.fixture
def side_cluster(cluster: EmbeddedCluster) -> Iterator[str]:
    """The name of a second cluster (the session's holds the default ports); always taken down."""
    name = f"{cluster.name}-side"
    yield name
    winsuite("cluster", "down", "--name", name)


def up(name: str) -> subprocess.CompletedProcess[str]:
    started = winsuite("cluster", "up", "--name", name, "--no-real-node")
    assert started.returncode == 0, started.stderr
    return started


def test_up_status_kubeconfig_and_down(side_cluster: str) -> None:
    started = up(side_cluster)
    kubeconfig = Path(started.stdout.strip())

    assert "is in use; using" in started.stderr  # the session cluster holds the default ports
    assert winsuite("cluster", "kubeconfig", "--name", side_cluster).stdout.strip() == str(kubeconfig)
    status = winsuite("cluster", "status", "--name", side_cluster)
    assert status.returncode == ExitCode.OK, status.stdout
    assert "running" in status.stdout
    version = json.loads(
        winsuite("cluster", "kubectl", "--name", side_cluster, "--", "version", "-o", "json").stdout
    )
    assert (
        version["serverVersion"]["gitVersion"]
        == version["clientVersion"]["gitVersion"]
        == load_pins().kubernetes
    )
    nodes = winsuite(
        "cluster",
        "kubectl",
        "--name",
        side_cluster,
        "--",
        "get",
        "nodes",
        "--no-headers",
        "-L",
        "kubernetes.io/os,node.kubernetes.io/windows-build",
    ).stdout.split("\n")
    rows = sorted(tuple(line.split()[i] for i in (1, 5, -1)) for line in nodes if line)
    assert rows == [
        ("Ready", "linux", "linux"),
        ("Ready", "windows", "10.0.17763"),
        ("Ready", "windows", "10.0.20348"),
    ]

    assert "reusing it" in up(side_cluster).stderr
    state = load(Layout(side_cluster))
    assert state is not None
    assert winsuite("cluster", "down", "--name", side_cluster).returncode == ExitCode.OK

    assert leftovers.after_down(Layout(side_cluster), state) == []
    assert winsuite("cluster", "status", "--name", side_cluster).returncode == ExitCode.CLUSTER_UNREACHABLE


def test_a_crashed_component_is_reported_with_its_log(side_cluster: str) -> None:
    up(side_cluster)
    state = load(Layout(side_cluster))
    assert state is not None
    kwok = state.process("kwok")
    assert kwok is not None
    os.kill(kwok.pid, signal.SIGKILL)
    assert wait_exit(kwok, timeout=10)

    status = winsuite("cluster", "status", "--name", side_cluster)

    assert status.returncode == ExitCode.CLUSTER_UNREACHABLE
    assert f"kwok (pid {kwok.pid}) exited; last lines of {kwok.log}:" in status.stdout
