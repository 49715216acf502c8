"""`winsuite run --rerun-failed` on the embedded cluster: a build with one failing and one flaky test, rerun."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import Build
from tests.integration.runner_support import job_dirs
from tests.integration.runner_support import run_args
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.errors import ExitCode

pytestmark = pytest.mark.cluster

FAILING = "[It] [sig-testing] winsuite runner fails with <b>markup</b> & \"quotes\" in its name"
FLAKY = "[It] [sig-testing] winsuite runner flakes: fails on the first attempt and passes on the next"


@pytest.fixture(scope="module")
def builds(cluster: EmbeddedCluster, tmp_path_factory: pytest.TempPathFactory) -> tuple[Build, Build, str]:
    root = tmp_path_factory.mktemp("results")
    subprocess.run(run_args(cluster, root, "--flake-attempts", "2", "--skip", "waits", "--build-id", "100"),
                   cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=900, check=False)
    (job,) = job_dirs(root)
    first = Build(job / "100")
    # Only the cluster is named again: the job, cases, parallelism and flake attempts come from the build.
    rerun = subprocess.run([*WINSUITE, "run", "--kubeconfig", str(cluster.kubeconfig), "--rerun-failed",
                            str(first.path), "--build-id", "101"],
                           cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=900, check=False)
    return first, Build(job / "101"), rerun.stdout + rerun.stderr


def test_the_first_build_has_a_failing_and_a_flaky_test(builds: tuple[Build, Build, str]) -> None:
    first, _, _ = builds
    statuses = {(r.name, r.status) for r in first.rows()}
    assert {(FAILING, "failed"), (FLAKY, "failed"), (FLAKY, "passed")} <= statuses
    assert len({r.name for r in first.rows() + first.rows("junit_02.xml")}) > 2


def test_the_rerun_runs_exactly_those_two(builds: tuple[Build, Build, str]) -> None:
    _, second, output = builds
    assert "rerunning 2 test(s)" in output, output
    rows = second.rows() + (second.rows("junit_02.xml") if (second.path / "artifacts/junit_02.xml").is_file()
                            else [])
    assert sorted({r.name for r in rows}) == sorted([FAILING, FLAKY]), output
    assert [(r.status, r.properties["attempt"]) for r in rows if r.name == FLAKY] == [("failed", "1"),
                                                                                      ("passed", "2")]


def test_the_rerun_is_a_build_of_the_same_job_naming_the_build_it_reran(builds: tuple[Build, Build, str]) -> None:
    first, second, output = builds
    assert second.path.parent == first.path.parent, output
    finished = second.finished
    assert finished["result"] == "FAILURE"  # the failing test fails again
    metadata = finished["metadata"]
    assert metadata["rerun-of"] == "100" and metadata["rerun-tests"] == 2
    assert Path(metadata["rerun-of-dir"]) == first.path.resolve()
    assert metadata["flake-attempts"] == 2 and metadata["parallelism"] == 2
    assert metadata["cases"] == "tests.runner_cases" and metadata["job"] == first.finished["metadata"]["job"]


def test_a_build_without_failures_has_nothing_to_rerun(tmp_path: Path) -> None:
    clean = tmp_path / "job" / "1"
    (clean / "artifacts").mkdir(parents=True)
    (clean / "started.json").write_text('{"timestamp": 1795500000, "metadata": {"job": "job"}}')
    done = subprocess.run([*WINSUITE, "run", "--rerun-failed", str(clean)], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == ExitCode.OK and "nothing to rerun" in done.stdout, done.stdout + done.stderr
