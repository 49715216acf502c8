"""`winsuite list` and `winsuite images` answer for the cluster --kubeconfig names (the session's embedded cluster, as
a cluster someone brings): the default job of such a cluster, named after its context; what the cluster's nodes lack
as skip reasons; the images for its nodes' Windows builds. Without --kubeconfig, nothing is asked of a cluster."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
import yaml

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.errors import ExitCode
from winsuite.policy.cluster_job import path_safe

pytestmark = pytest.mark.cluster

HOST_IP = "[sig-node] Pods should get a host IP [NodeConformance] [Conformance]"  # needs a node running containers
REJECTED = "[sig-windows] API compatibility a pod with spec.os.name windows should be rejected when spec.hostPID is set"


def winsuite(*args: str) -> dict[str, Any]:
    done = subprocess.run([*WINSUITE, *args, "--format", "json"], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == ExitCode.OK, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_list_says_what_the_cluster_would_run_and_skip_and_why(cluster: EmbeddedCluster) -> None:
    context = yaml.safe_load(cluster.kubeconfig.read_text())["current-context"]
    listed = winsuite("list", "--kubeconfig", str(cluster.kubeconfig), "--node-os", "windows", "--engine", "native")
    assert listed["job"] == f"winsuite-{path_safe(context)}-windows"
    assert listed["why"] == "the default for a cluster given by --kubeconfig; --job to choose another"
    assert listed["cluster"]["server"].startswith("https://")
    rows = {row["name"]: row for row in listed["tests"]}
    # Its Windows nodes are simulated: what needs Windows containers is skipped, saying what was found instead.
    assert rows[HOST_IP]["status"] == "skip"
    assert rows[HOST_IP]["reason"].startswith("requires a node that runs Windows containers (found: ")
    assert "simulated Windows node" in rows[HOST_IP]["reason"]
    assert rows[REJECTED]["status"] == "run"  # the API server alone decides it

    unasked = {row["name"]: row for row in winsuite("list", "--node-os", "windows", "--engine", "native")["tests"]}
    assert unasked[HOST_IP]["status"] == "run"  # no cluster asked: the job's policy alone


def test_images_are_those_of_the_tests_the_cluster_can_run_for_its_windows_builds(cluster: EmbeddedCluster) -> None:
    asked = winsuite("images", "--kubeconfig", str(cluster.kubeconfig), "--node-os", "windows")
    unasked = winsuite("images", "--job", "your-cluster", "--node-os", "windows")  # the same job, no cluster
    assert asked["job"] != unasked["job"] == "your-cluster"
    assert asked["cluster"] is not None and unasked["cluster"] is None
    builds = {row["build"] for row in asked["images"]}
    assert builds and builds <= {row["build"] for row in unasked["images"]}
    # Simulated Windows nodes run no container: the images of the tests that need one are left out.
    assert "pause" in {row["image"] for row in asked["images"]}
    assert {row["image"] for row in asked["images"]} < {row["image"] for row in unasked["images"]}
