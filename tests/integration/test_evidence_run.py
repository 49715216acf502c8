"""Every verdict with its evidence, on the embedded cluster with its real node: where each row's pods ran, a pod on
the wrong OS failing its test, and each failure class decided by what the run observed (images that do not pull,
an assertion, a timeout), for native tests and upstream specs; flakes under the no-flake policy. The node that went
away under a running test: test_evidence_upstream.py, one kubelet stop for both engines."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import pytest

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import RUNNER_CASES
from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import Build
from tests.integration.runner_support import only_build
from tests.integration.runner_support import together
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.cluster.embedded.config import REAL_NODE_NAME
from winsuite.errors import ExitCode

pytestmark = [pytest.mark.cluster, pytest.mark.real_node]

EVIDENCE_CASES = "tests.evidence_cases"
NOWHERE = "127.0.0.1:1/missing"  # nothing listens: every pull fails at once
REPO_LIST_KEYS = ("promoterE2eRegistry", "gcRegistry", "gcEtcdRegistry", "buildImageRegistry",
                  "sigStorageRegistry", "dockerLibraryRegistry")
HOST_IP = "[sig-node] Pods should get a host IP [NodeConformance] [Conformance]"


def run(cluster: EmbeddedCluster, root: Path, *extra: str, timeout: float = 900) -> tuple[int, str, Build]:
    done = subprocess.run([*WINSUITE, "run", "--job", "embedded", "--kubeconfig", str(cluster.kubeconfig),
                           "--results-root", str(root),
                           "-n", "2", *extra], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=timeout,
                          check=False)
    return done.returncode, done.stdout + done.stderr, only_build(root)


def rows_by_name(build: Build) -> dict[str, list[dict[str, str]]]:
    found: dict[str, list[dict[str, str]]] = {}
    for junit in ("junit_01.xml", "junit_02.xml"):
        if (build.path / "artifacts" / junit).exists():
            for row in build.rows(junit):
                found.setdefault(row.name.removeprefix("[It] "), []).append(
                    {"status": row.status, "message": row.message, **row.properties})
    return found


@pytest.fixture
def nowhere(tmp_path: Path) -> Path:
    repo_list = tmp_path / "repo-list.yaml"
    repo_list.write_text("".join(f"{key}: {NOWHERE}\n" for key in REPO_LIST_KEYS))
    return repo_list


def test_rows_name_the_real_node_and_the_summary_counts_where_tests_ran(real_node: EmbeddedCluster,
                                                                        tmp_path: Path) -> None:
    code, output, build = run(real_node, tmp_path, "--node-os", "linux", "--focus",
                              r"\[sig-node\] Pods should get a host IP|\[sig-node\] ConfigMap should be consumable via "
                              r"environment variable \[NodeConformance\]")
    assert code == ExitCode.OK, output
    rows = rows_by_name(build)
    assert len(rows) == 2 and all(r[-1]["ran-on"].startswith(f"{REAL_NODE_NAME} (linux, containerd://")
                                  for r in rows.values()), rows
    assert build.finished["metadata"]["ran-on"] == {"linux": 2}
    assert "Ran on: linux: 2 test(s)" in output


def test_a_pod_on_the_wrong_os_fails_its_test_naming_the_node(real_node: EmbeddedCluster, tmp_path: Path) -> None:
    code, output, build = run(real_node, tmp_path / "windows", "--cases", EVIDENCE_CASES, "--node-os", "windows",
                              "--focus", "runs a pod without the target's placement")
    assert code == ExitCode.TESTS_FAILED, output
    (row,) = rows_by_name(build).values()
    assert row[-1]["status"] == "failed" and row[-1]["failure-class"] == "infrastructure", row
    assert row[-1]["message"].startswith("infrastructure: placement: the run targets windows"), row
    assert f"{REAL_NODE_NAME} (linux" in row[-1]["message"], row
    assert build.finished["metadata"]["failure-classes"] == {"infrastructure": 1}
    code, output, build = run(real_node, tmp_path / "linux", "--cases", EVIDENCE_CASES, "--node-os", "linux",
                              "--focus", "runs a pod without the target's placement")
    assert code == ExitCode.OK, output  # the same pod, on the OS the run targets


def test_images_that_do_not_pull_are_infrastructure_with_the_pull_as_evidence(real_node: EmbeddedCluster,
                                                                              tmp_path: Path, nowhere: Path) -> None:
    """The host-IP test with its images where nothing listens, on both engines at once: each row is infrastructure,
    with the failed pull as its evidence. The wait is the per-test timeout of 90 s both engines must reach (the port's
    own wait for the pod is 3 min, upstream's 5 min): the pull's evidence, not the timeout, decides the class."""
    (code, output, build), (upstream_code, upstream_output, upstream) = together(*(
        functools.partial(run, real_node, tmp_path / engine, "--node-os", "linux", "--repo-list", str(nowhere),
                          "--focus", r"Pods should get a host IP", "--engine", engine, "--test-timeout", "90s")
        for engine in ("native", "upstream")))
    assert code == ExitCode.TESTS_FAILED, output
    assert upstream_code == ExitCode.TESTS_FAILED, upstream_output
    for engine, result in (("native", build), ("upstream", upstream)):
        row = rows_by_name(result)[HOST_IP][-1]
        assert row["status"] == "failed" and row["failure-class"] == "infrastructure", (engine, row)
        assert row["failure-evidence"].startswith("image pull failed: pod "), (engine, row)
        assert NOWHERE in row["failure-evidence"] and row["message"].startswith("infrastructure: "), (engine, row)
        assert result.finished["metadata"]["failure-classes"] == {"infrastructure": 1}, engine


def test_a_port_that_skips_where_upstream_runs_fails_the_engines_agree_row(real_node: EmbeddedCluster,
                                                                           tmp_path: Path) -> None:
    """--engine both with tests/evidence_cases' port of the host-IP spec, which needs a GPU Windows node: on the
    embedded cluster the port skips, upstream's spec runs and passes, and the cross-check says so."""
    code, output, build = run(real_node, tmp_path, "--cases", EVIDENCE_CASES, "--node-os", "linux", "--engine", "both",
                              "--focus", r"Pods should get a host IP")
    assert code == ExitCode.TESTS_FAILED, output
    rows = rows_by_name(build)
    (check,) = [r[-1] for name, r in rows.items() if name.startswith("[winsuite] engines agree: ")]
    assert check["status"] == "failed", check
    assert "native skipped (requires a Windows node with a DirectX GPU device plugin" in check["message"], check
    assert "upstream passed" in check["message"], check
    assert sorted(r["status"] for r in rows[HOST_IP]) == ["passed", "skipped"], rows


def test_an_assertion_is_test_and_a_cut_off_wait_is_timeout(cluster: EmbeddedCluster, tmp_path: Path) -> None:
    code, output, build = run(cluster, tmp_path, "--cases", RUNNER_CASES, "--focus", "fails with|waits for a pod that",
                              "--test-timeout", "20s")
    assert code == ExitCode.TESTS_FAILED, output
    rows = rows_by_name(build)
    failed = next(r[-1] for name, r in rows.items() if "fails with" in name)
    waited = next(r[-1] for name, r in rows.items() if "waits for a pod" in name)
    assert failed["failure-class"] == "test" and failed["message"].startswith("test: "), failed
    assert waited["failure-class"] == "timeout" and "per-test timeout" in waited["failure-evidence"], waited
    assert "Failures by class: 1 timeout, 1 test" in output or "Failures by class: 1 test, 1 timeout" in output


def test_a_flake_is_flaky_and_fails_a_job_that_wants_no_flakes(cluster: EmbeddedCluster, tmp_path: Path) -> None:
    code, output, build = run(cluster, tmp_path / "allowed", "--cases", RUNNER_CASES, "--focus", "flakes:",
                              "--flake-attempts", "2")
    assert code == ExitCode.OK and build.finished["metadata"]["flaky"] == 1, output
    assert "FLAKY" in output and build.finished["result"] == "SUCCESS"
    code, output, build = run(cluster, tmp_path / "policy", "--cases", RUNNER_CASES, "--focus", "flakes:",
                              "--flake-attempts", "2", "--fail-on-flaky")
    assert code == ExitCode.TESTS_FAILED, output
    assert build.finished["result"] == "FAILURE" and "passed only on a retry" in build.finished["metadata"][
        "flaky-policy"]
    assert f"winsuite: FAILURE\n  why: {build.finished['metadata']['flaky-policy']}\n  0 passed" in output, output
