"""`winsuite run --ops-readiness` on the embedded cluster's real node: a specification fixture in the upstream
format runs, and its rows carry the category and test case that selected them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import only_build
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.errors import ExitCode
from winsuite.policy.ops_readiness import NO_CASES

pytestmark = [pytest.mark.cluster, pytest.mark.real_node]

FIXTURE = PROJECT_ROOT / "tests" / "fixtures" / "ops-readiness"
UPSTREAM_SPECS = PROJECT_ROOT / "tests" / "fixtures" / "ops-readiness-upstream" / "specifications"
HOST_IP = "[It] [sig-node] Pods should get a host IP [NodeConformance] [Conformance]"
LOGS = "[It] [sig-node] Pods should support retrieving logs from the container over websockets [NodeConformance] " \
       "[Conformance]"


def test_an_ops_readiness_category_runs_and_labels_its_rows(real_node: EmbeddedCluster, tmp_path: Path) -> None:
    done = subprocess.run([*WINSUITE, "run", "--job", "embedded", "--kubeconfig", str(real_node.kubeconfig),
                           "--node-os", "linux",
                           "--results-root", str(tmp_path), "--ops-readiness", str(FIXTURE), "--category",
                           "Core.Pods"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == ExitCode.OK, output
    assert "ops-readiness Core.Pods: Ability to schedule a pod and read its host IP: 1 test(s)" in output
    rows = {r.name: r for r in only_build(tmp_path).rows()}
    assert set(rows) == {HOST_IP, LOGS}, output
    assert rows[HOST_IP].status == "passed" and rows[LOGS].status == "passed"
    assert rows[HOST_IP].properties["category"] == "Core.Pods"
    assert rows[HOST_IP].properties["ops-readiness-case"] == "Ability to schedule a pod and read its host IP"
    assert rows[LOGS].properties["ops-readiness-case"] == "Ability to read a container's logs through the API"


def test_a_case_that_selects_nothing_is_a_row(real_node: EmbeddedCluster, tmp_path: Path) -> None:
    done = subprocess.run([*WINSUITE, "run", "--job", "embedded", "--kubeconfig", str(real_node.kubeconfig),
                           "--node-os", "linux",
                           "--results-root", str(tmp_path), "--ops-readiness", str(FIXTURE), "--category",
                           "Extend.HostProcess"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600,
                          check=False)
    output = done.stdout + done.stderr
    rows = {r.name: r for r in only_build(tmp_path).rows()}
    empty = "[It] [ops-readiness] Extend.HostProcess: Ability to run a HostProcess container that no version of " \
            "the catalog has"
    assert rows[empty].status == "skipped" and "selects no test of the catalog" in rows[empty].message, output
    assert rows[empty].properties["category"] == "Extend.HostProcess"


def test_upstreams_specifications_without_cases_run_as_categories_saying_so(
    real_node: EmbeddedCluster, tmp_path: Path
) -> None:
    done = subprocess.run([*WINSUITE, "run", "--job", "embedded", "--kubeconfig", str(real_node.kubeconfig),
                           "--node-os", "linux",
                           "--results-root", str(tmp_path), "--ops-readiness", str(UPSTREAM_SPECS),
                           "--category", "Extend.HostProcess", "--category", "Extend.Worker"],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, check=False)
    output = done.stdout + done.stderr
    rows = {r.name: r for r in only_build(tmp_path).rows()}

    assert f"ops-readiness Extend.HostProcess: {NO_CASES}" in output
    assert sorted(rows) == [f"[It] [ops-readiness] Extend.HostProcess: {NO_CASES}",
                            f"[It] [ops-readiness] Extend.Worker: {NO_CASES}"], output
    hostprocess = rows[f"[It] [ops-readiness] Extend.HostProcess: {NO_CASES}"]
    assert hostprocess.status == "skipped"
    assert str(UPSTREAM_SPECS / "ext-hostprocess" / "spec.yaml") in hostprocess.message
    assert hostprocess.properties["ops-readiness-case"] == NO_CASES
    assert done.returncode == ExitCode.NO_TESTS_SELECTED, output  # categories with no case select no test


def test_a_bad_spec_is_one_line(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("category: Core.Pods\ntestCases: [{description: x, focus: ['(']}]\n")
    done = subprocess.run([*WINSUITE, "run", "--ops-readiness", str(spec)], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == ExitCode.USAGE_ERROR
    assert done.stderr.strip().count("\n") == 0 and "testCases[0].focus[0]" in done.stderr, done.stderr
