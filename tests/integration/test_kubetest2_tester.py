"""`kubetest2-tester-winsuite` run as kubetest2 runs a tester (pkg/app/cmd.go, pkg/app/app.go) against the embedded
cluster: `--help` with the tester's arguments first, then the arguments after `--` in kubetest2's environment
(ARTIFACTS, KUBETEST2_RUN_DIR, KUBETEST2_RUN_ID, the deployer's KUBECONFIG); its exit code decides the Test step and
$ARTIFACTS holds the build as prow uploads it. (kubetest2 itself is not on the Go module proxy: the project cannot
install it, so its launcher is run by hand, not here.)"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import RUNNER_CASES
from tests.integration.runner_support import together
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.errors import ExitCode
from winsuite.inputs.pins import load_pins

pytestmark = pytest.mark.cluster

TESTER = Path(sys.executable).parent / "kubetest2-tester-winsuite"  # the console script, installed beside python
# Two fast runner cases, one per phase; the deliberate failure; a focus that selects nothing.
PASSING = r"passes when the API server answers|runs alone in the serial phase"
FAILING = r"fails with <b>markup</b>"
NOTHING = r"no test is named like this"
KUBETEST2_METADATA = {"kubetest-version": "kubetest2 version test", "deployer-version": "noop"}


def arguments_after_dashes(focus: str) -> list[str]:
    """The tester's arguments; `--skip` replaces the skip list of the default job of a kubeconfig (which leaves
    [Serial] out), so that the serial phase runs too."""
    return ["--cases", RUNNER_CASES, "--node-os", "linux", "--focus", focus, "--skip", r"\[Slow\]", "-n", "2"]


@dataclasses.dataclass
class Outcome:
    code: int
    output: str
    artifacts: Path
    builds: Path  # the run directory's winsuite builds

    def rows(self, junit: str) -> dict[str, str]:
        """Each row's name (without ginkgo's "[It] ") -> passed, failed or skipped."""
        root = ET.parse(self.artifacts / junit).getroot()
        return {case.get("name", "").removeprefix("[It] "): "failed" if case.find("failure") is not None
                else "skipped" if case.find("skipped") is not None else "passed" for case in root.iter("testcase")}


def kubetest2_env(cluster: EmbeddedCluster, work: Path) -> dict[str, str]:
    """What kubetest2 adds to its own environment for the tester, with what it has written to $ARTIFACTS before."""
    artifacts, run_dir = work / "artifacts", work / "_rundir" / "run-1"
    artifacts.mkdir(parents=True)
    (artifacts / "metadata.json").write_text(json.dumps(KUBETEST2_METADATA))
    (artifacts / "junit_runner.xml").write_text("")  # kubetest2 holds it open and writes it at its end
    return {**os.environ, "ARTIFACTS": str(artifacts), "KUBETEST2_RUN_DIR": str(run_dir), "KUBETEST2_RUN_ID": "run-1",
            "PATH": f"{run_dir}{os.pathsep}{os.environ['PATH']}", "KUBECONFIG": str(cluster.kubeconfig)}


def as_kubetest2_runs_it(cluster: EmbeddedCluster, work: Path, focus: str) -> Outcome:
    env, args = kubetest2_env(cluster, work), arguments_after_dashes(focus)
    usage = subprocess.run([str(TESTER), "--help", *args], cwd=PROJECT_ROOT, capture_output=True, text=True,
                           timeout=60, check=False, env=dict(os.environ))
    assert usage.returncode == 0 and "--test=winsuite" in usage.stdout, usage.stderr
    done = subprocess.run([str(TESTER), *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=900,
                          check=False, env=env)
    return Outcome(done.returncode, done.stdout + done.stderr, Path(env["ARTIFACTS"]),
                   Path(env["KUBETEST2_RUN_DIR"]) / "winsuite")


@pytest.fixture(scope="module")
def runs(cluster: EmbeddedCluster, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    assert TESTER.is_file(), f"{TESTER} is not installed: pip install -e . (pyproject's [project.scripts])"
    names = ("passing", "failing", "nothing")
    outcomes = together(*[functools.partial(as_kubetest2_runs_it, cluster, tmp_path_factory.mktemp(name), focus)
                          for name, focus in zip(names, (PASSING, FAILING, NOTHING), strict=True)])
    return dict(zip(names, outcomes, strict=True))


def test_a_passing_run_exits_0_with_its_junit_directly_in_artifacts(runs: dict[str, Outcome]) -> None:
    run = runs["passing"]
    assert run.code == ExitCode.OK, run.output
    assert {p.name for p in run.artifacts.glob("junit_*.xml")} == {"junit_01.xml", "junit_02.xml", "junit_runner.xml"}
    assert set(run.rows("junit_01.xml").values()) == {"passed"} and len(run.rows("junit_01.xml")) == 1
    assert list(run.rows("junit_02.xml").items()) == [
        ("[sig-testing] winsuite runner runs alone in the serial phase [Serial]", "passed")]
    assert not (run.artifacts / "artifacts").exists(), "no build nested inside $ARTIFACTS"
    assert (run.artifacts / "winsuite-build-log.txt").is_file()


def test_metadata_json_keeps_kubetest2s_keys_and_adds_the_runs(runs: dict[str, Outcome]) -> None:
    metadata = json.loads((runs["passing"].artifacts / "metadata.json").read_text())
    assert {k: metadata[k] for k in KUBETEST2_METADATA} == KUBETEST2_METADATA
    assert metadata["kubernetes-version"] == metadata["job-version"] == load_pins().kubernetes
    assert metadata["tester-version"].startswith("winsuite ") and metadata["node-os"] == "linux"


def test_the_whole_build_stays_in_the_run_directory(runs: dict[str, Outcome]) -> None:
    (build,) = runs["passing"].builds.iterdir()
    finished = json.loads((build / "finished.json").read_text())
    assert finished["passed"] is True and finished["result"] == "SUCCESS"
    assert (build / "artifacts" / "junit_01.xml").read_bytes() == (runs["passing"].artifacts / "junit_01.xml"
                                                                   ).read_bytes()


def test_a_failing_test_fails_the_tester_with_its_diagnostics_where_its_row_links(runs: dict[str, Outcome]) -> None:
    run = runs["failing"]
    assert run.code == ExitCode.TESTS_FAILED, run.output
    assert run.rows("junit_01.xml") == {'[sig-testing] winsuite runner fails with <b>markup</b> & "quotes" in its name':
                                        "failed"}
    root = ET.parse(run.artifacts / "junit_01.xml").getroot()
    link = next(p.get("value", "") for p in root.iter("property") if p.get("name") == "diagnostics")
    # The link is relative to the build, whose artifacts/ $ARTIFACTS is (prow uploads it as <build>/artifacts/).
    assert (run.artifacts.parent / link / "events.yaml").is_file(), link


def test_a_focus_selecting_nothing_exits_with_winsuites_code(runs: dict[str, Outcome]) -> None:
    run = runs["nothing"]
    assert run.code == ExitCode.NO_TESTS_SELECTED, run.output

