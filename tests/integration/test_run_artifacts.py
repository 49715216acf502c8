"""`winsuite run` against the embedded cluster leaves prow artifacts TestGrid can read, and nothing behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import Build
from tests.integration.runner_support import only_build
from tests.integration.runner_support import run_args
from tests.integration.runner_support import run_namespaces
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.errors import ExitCode
from winsuite.inputs.pins import load_pins

pytestmark = pytest.mark.cluster

FAILING = "[It] [sig-testing] winsuite runner fails with <b>markup</b> & \"quotes\" in its name"
FLAKY = "[It] [sig-testing] winsuite runner flakes: fails on the first attempt and passes on the next"
SKIPPED = "[It] [sig-testing] winsuite runner skips when the cluster lacks what it needs"
SERIAL = "[It] [sig-testing] winsuite runner runs alone in the serial phase [Serial]"


@pytest.fixture(scope="module")
def run(cluster: EmbeddedCluster, tmp_path_factory: pytest.TempPathFactory) -> tuple[Build, int, str]:
    root = tmp_path_factory.mktemp("results")
    done = subprocess.run(run_args(cluster, root, "--flake-attempts", "2", "--skip", "waits"),
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=900, check=False)
    return only_build(root), done.returncode, done.stdout


def test_a_failing_run_exits_non_zero_and_says_failure(run: tuple[Build, int, str]) -> None:
    build, code, output = run
    assert code == ExitCode.TESTS_FAILED, output
    finished = build.finished
    assert finished["passed"] is False and finished["result"] == "FAILURE"
    metadata = finished["metadata"]
    assert metadata["kubernetes-version"] == load_pins().kubernetes
    # The embedded cluster's Windows nodes are all simulated: what they report (kwok's template) is published under
    # simulated- keys only, never as a column header's real fact; each build still with its update revision.
    windows_facts = {"windows-builds", "container-runtime", "container-runtime-windows", "kubelet-version-windows"}
    assert not windows_facts & metadata.keys()
    builds = metadata["simulated-windows-builds"].split(",")
    assert [b.rsplit(".", 1)[0] for b in builds] == ["10.0.17763", "10.0.20348"]
    assert all(b.count(".") == 3 for b in builds)
    assert metadata["node-os"] == "windows" and metadata["job"] == "winsuite-embedded"
    assert {n["name"] for n in metadata["discovery"]["nodes"]} >= {"win2019-0", "win2022-0"}
    for name in ("started.json", "build-log.txt", "artifacts/metadata.json", "artifacts/junit_01.xml",
                 "artifacts/junit_02.xml"):
        assert (build.path / name).is_file(), name


def test_rows_carry_upstream_style_names_messages_and_skip_reasons(run: tuple[Build, int, str]) -> None:
    build, _, _ = run
    rows = {r.name: r for r in build.rows()}
    failing = [r for r in build.rows() if r.name == FAILING]
    assert failing and all(r.status == "failed" for r in failing)
    assert failing[0].message == "test: AssertionError: deliberate failure <with> & markup"  # its class first
    assert failing[0].properties["failure-class"] == "test"
    assert rows[SKIPPED].status == "skipped"
    assert rows[SKIPPED].message == "requires a node that runs Windows containers (found: 2 simulated Windows nodes)"
    assert SERIAL in {r.name for r in build.rows("junit_02.xml")}, "the [Serial] test belongs to phase 2"
    assert SERIAL not in rows


def test_a_flaky_test_keeps_every_attempt_as_its_own_row(run: tuple[Build, int, str]) -> None:
    build, _, output = run
    attempts = [r for r in build.rows() if r.name == FLAKY]
    assert [(r.status, r.properties["attempt"]) for r in attempts] == [("failed", "1"), ("passed", "2")]
    assert "1 flaky" in output


def test_a_failed_test_has_diagnostics_linked_from_its_row(run: tuple[Build, int, str]) -> None:
    build, _, _ = run
    failing = next(r for r in build.rows() if r.name == FAILING)
    diagnostics = build.path / failing.properties["diagnostics"]
    assert (diagnostics / "events.yaml").is_file() and (diagnostics / "pods.yaml").is_file()
    assert "fails" in (diagnostics / "pods.txt").read_text(), "the failing test's pod is described"


def test_no_namespace_of_the_run_is_left(run: tuple[Build, int, str], cluster: EmbeddedCluster) -> None:
    build, _, _ = run
    assert run_namespaces(cluster, build.finished["metadata"]["run-id"]) == []


def test_an_unreachable_cluster_is_one_line(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: c, cluster: {server: "
        "'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n")
    done = subprocess.run([sys.executable, "-m", "winsuite.cli", "run", "--kubeconfig", str(kubeconfig),
                           "--results-root", str(tmp_path / "r")], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == ExitCode.CLUSTER_UNREACHABLE
    errors = [line for line in done.stderr.splitlines() if line.startswith("winsuite: error")]
    assert errors == [line for line in done.stderr.splitlines() if line.strip()], done.stderr
    assert "https://127.0.0.1:1" in errors[0] and "Traceback" not in done.stdout + done.stderr
