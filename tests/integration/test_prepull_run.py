"""Prepull on the embedded cluster's real node: the Linux selection's images are pulled and the step is a row;
an image that does not exist fails the step with the node and image named, and no DaemonSet is left."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from kubernetes import client

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import only_build
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.errors import ExitCode

pytestmark = [pytest.mark.cluster, pytest.mark.real_node]

ROW = "[It] [winsuite] prepull linux images"


def prepull_leftovers(cluster: EmbeddedCluster) -> list[str]:
    spaces = [n.metadata.name for n in client.CoreV1Api(cluster.api).list_namespace().items
              if n.metadata.name.startswith("winsuite-prepull-") and n.status.phase != "Terminating"]
    sets = [d.metadata.name for d in client.AppsV1Api(cluster.api).list_daemon_set_for_all_namespaces().items
            if d.metadata.name.startswith("prepull-")]
    return spaces + sets


def test_a_run_prepulls_the_linux_selection_and_writes_its_row(real_node: EmbeddedCluster, tmp_path: Path) -> None:
    done = subprocess.run([*WINSUITE, "run", "--job", "embedded", "--kubeconfig", str(real_node.kubeconfig),
                           "--node-os", "linux",
                           "--prepull", "--focus", r"\[sig-node\] Pods should get a host IP", "--results-root",
                           str(tmp_path)], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == ExitCode.OK, output
    rows = {r.name: r for r in only_build(tmp_path).rows()}
    assert rows[ROW].status == "passed", output
    assert "prepull prepull-linux: 1/1 (nodes x images) done" in output  # pause: the one image of that test
    assert prepull_leftovers(real_node) == []


def test_an_image_that_does_not_exist_fails_the_prepull_naming_node_and_image(
    real_node: EmbeddedCluster, tmp_path: Path
) -> None:
    repo_list = tmp_path / "repo-list.yaml"
    repo_list.write_text("promoterE2eRegistry: winsuite.invalid/e2e-test-images\ngcRegistry: winsuite.local\n")
    done = subprocess.run([*WINSUITE, "prepull", "--job", "embedded", "--kubeconfig", str(real_node.kubeconfig),
                           "--node-os", "linux",
                           "--repo-list", str(repo_list), "--focus", "Simple pod should support exec using resource",
                           "--timeout", "3m"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600,
                          check=False)
    output = done.stdout + done.stderr
    assert done.returncode == ExitCode.TESTS_FAILED, output
    assert "[winsuite] prepull linux images: failed" in output
    assert "node linux-0: image winsuite.invalid/e2e-test-images/agnhost:2.63.0: ErrImagePull" in output, output
    assert prepull_leftovers(real_node) == []
