"""`kubetest2-tester-winsuite` maps kubetest2's contract onto `winsuite run`: the arguments after kubetest2's `--`
passed on, the deployer's $KUBECONFIG as --kubeconfig unless they choose a cluster, the build handed over into
$ARTIFACTS as prow's layout has it, `--help` as kubetest2 asks for a tester's usage, winsuite's exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from winsuite import kubetest2_tester
from winsuite.errors import ExitCode
from winsuite.errors import UsageError
from winsuite.kubetest2_tester import BUILD_LOG_COPY
from winsuite.kubetest2_tester import Kubetest2Env
from winsuite.kubetest2_tester import RunRequest
from winsuite.kubetest2_tester import hand_over
from winsuite.kubetest2_tester import merged_metadata
from winsuite.kubetest2_tester import new_build_dir
from winsuite.kubetest2_tester import requested_run

CWD = Path("/work/job")
# What kubetest2 (pkg/app/app.go) puts in its tester's environment, the noop deployer's kubeconfig included.
KUBETEST2 = {"ARTIFACTS": "/logs/artifacts", "KUBETEST2_RUN_DIR": "/work/job/_rundir/4f2c",
             "KUBETEST2_RUN_ID": "4f2c", "KUBECONFIG": "/home/ci/.kube/cluster.yaml"}
ENV = Kubetest2Env.from_environ(KUBETEST2, CWD)


def test_kubetest2s_environment_names_the_artifacts_the_run_directory_and_the_deployers_kubeconfig() -> None:
    env = Kubetest2Env.from_environ(KUBETEST2, CWD)
    assert env == Kubetest2Env(Path("/logs/artifacts"), Path("/work/job/_rundir/4f2c"),
                               "/home/ci/.kube/cluster.yaml", None)
    assert Kubetest2Env.from_environ({"BUILD_ID": "1795"}, CWD).build_id == "1795"


def test_unset_or_relative_paths_follow_kubetest2s_defaults_made_absolute() -> None:
    assert Kubetest2Env.from_environ({}, CWD) == Kubetest2Env(CWD / "_artifacts", CWD / "_rundir", None, None)
    relative = Kubetest2Env.from_environ({"ARTIFACTS": "out", "KUBECONFIG": "../kc", "KUBETEST2_RUN_DIR": ""}, CWD)
    assert (relative.artifacts, relative.kubeconfig, relative.run_dir) == (CWD / "out", "/work/kc", CWD / "_rundir")
    assert Kubetest2Env.from_environ({"KUBECONFIG": ""}, CWD).kubeconfig is None


def test_the_arguments_pass_on_after_the_build_directory_and_the_deployers_kubeconfig() -> None:
    args = ["--job", "sig-windows-parallel", "--focus", "DNS", "--", "-x"]
    planned = requested_run(args, ENV)
    assert planned == RunRequest(tuple(args), "/home/ci/.kube/cluster.yaml", None)
    assert planned.argv(Path("/b/1")) == ["run", "--artifacts", "/b/1", "--kubeconfig", "/home/ci/.kube/cluster.yaml",
                                          "--job", "sig-windows-parallel", "--focus", "DNS", "--", "-x"]


@pytest.mark.parametrize("choice", [["--kubeconfig", "/other"], ["--kubeconfig=/other"], ["--kubecon", "/other"],
                                    ["--in-cluster-config"], ["--cluster-type", "embedded"]])
def test_arguments_that_choose_the_cluster_keep_the_deployers_kubeconfig_out(choice: list[str]) -> None:
    planned = requested_run(choice, ENV)
    assert planned.kubeconfig is None
    assert planned.argv(Path("/b/1")) == ["run", "--artifacts", "/b/1", *choice]


def test_without_a_deployers_kubeconfig_the_job_chooses_the_cluster() -> None:
    planned = requested_run(["--node-os", "linux"], Kubetest2Env.from_environ({}, CWD))
    assert planned.argv(Path("/b/1")) == ["run", "--artifacts", "/b/1", "--node-os", "linux"]


def test_a_kubeconfig_list_is_refused_unless_the_arguments_name_one_file() -> None:
    listed = Kubetest2Env.from_environ({"KUBECONFIG": "/a:/b"}, CWD)
    with pytest.raises(UsageError, match="lists several files"):
        requested_run([], listed)
    assert requested_run(["--kubeconfig", "/a"], listed).kubeconfig is None


@pytest.mark.parametrize(("args", "refused"), [(["--artifacts", "/elsewhere"], "--artifacts: kubetest2 names"),
                                               (["--in-cluster", "--detach"], "--detach: kubetest2 takes")])
def test_what_kubetest2_decides_is_refused_in_the_arguments(args: list[str], refused: str) -> None:
    with pytest.raises(UsageError, match=refused):
        requested_run(args, ENV)


def test_the_build_is_named_by_its_build_id_else_prows_else_its_start_time(tmp_path: Path) -> None:
    prow_build = Kubetest2Env.from_environ({**KUBETEST2, "BUILD_ID": "1795"}, CWD)
    assert requested_run(["--build-id", "7"], prow_build).build_id == "7"
    assert requested_run([], prow_build).build_id == "1795"
    assert requested_run([], ENV).build_id is None
    assert new_build_dir(tmp_path / "winsuite", "1795") == tmp_path / "winsuite" / "1795"
    made = new_build_dir(tmp_path / "winsuite", None)
    assert made.is_dir() and made.parent == tmp_path / "winsuite" and len(made.name) == 14 and made.name.isdigit()


def test_help_prints_the_usage_on_stdout_as_kubetest2_asks_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """kubetest2 (pkg/app/cmd.go) runs `TESTER --help TESTER_ARGS` before anything else, shows its stdout, and
    stops on a non-zero exit: the usage exits 0 whatever follows, and makes nothing."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        kubetest2_tester.main(["--help", "--job", "sig-windows-parallel", "--focus", "x"], environ={})
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: kubetest2 DEPLOYER --test=winsuite --")
    assert "--focus RE" in out and "$KUBECONFIG as --kubeconfig" in out and "5 no tests selected" in out
    assert list(tmp_path.iterdir()) == []


def test_the_run_gets_the_mapped_arguments_and_its_exit_code_is_the_testers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[str]] = []

    def run(argv: list[str]) -> int:
        seen.append(argv)
        return int(ExitCode.NO_TESTS_SELECTED)

    monkeypatch.setattr("winsuite.cli.main", run)
    environ = {**KUBETEST2, "ARTIFACTS": str(tmp_path / "artifacts"), "KUBETEST2_RUN_DIR": str(tmp_path / "run")}
    code = kubetest2_tester.main(["--focus", "nothing", "--build-id", "b1"], environ=environ)
    assert code == ExitCode.NO_TESTS_SELECTED
    assert seen == [["run", "--artifacts", str(tmp_path / "run" / "winsuite" / "b1"),
                     "--kubeconfig", "/home/ci/.kube/cluster.yaml", "--focus", "nothing", "--build-id", "b1"]]
    assert not (tmp_path / "run" / "winsuite" / "b1").exists(), "a build never written leaves no directory"


def test_a_refused_argument_is_a_usage_error_before_any_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("winsuite.cli.main", lambda argv: pytest.fail("no run"))
    code = kubetest2_tester.main(["--artifacts", "x"], environ={"KUBETEST2_RUN_DIR": str(tmp_path)})
    assert code == ExitCode.USAGE_ERROR
    assert capsys.readouterr().err.startswith("kubetest2-tester-winsuite: error: --artifacts: kubetest2 names")
    assert list(tmp_path.iterdir()) == []


def test_metadata_keeps_kubetest2s_keys_and_adds_the_testers() -> None:
    kubetest2 = {"kubetest-version": "kubetest2 version v1", "deployer-version": "v2"}
    winsuite = {"job": "sig-windows-parallel", "kubernetes-version": "v1.36.3", "focus": ["DNS"]}
    assert merged_metadata(kubetest2, winsuite, "winsuite 0.1.0") == {
        **kubetest2, **winsuite, "tester-version": "winsuite 0.1.0", "job-version": "v1.36.3"}
    assert merged_metadata({}, {"job-version": "kept"}, "w")["job-version"] == "kept"
    assert merged_metadata({}, {}, "w")["job-version"] == ""


def test_the_build_is_handed_over_into_artifacts_in_prows_layout(tmp_path: Path) -> None:
    build, artifacts = tmp_path / "run" / "winsuite" / "b1", tmp_path / "artifacts"
    files = {"artifacts/junit_01.xml": "<testsuites/>", "artifacts/junit_02.xml": "<testsuites/>",
             "artifacts/metadata.json": json.dumps({"job": "j", "kubernetes-version": "v1.36.3"}),
             "artifacts/Pods_should_run_1a2b3c4d/events.yaml": "[]", "build-log.txt": "winsuite run …\n",
             "started.json": "{}", "finished.json": "{}"}
    for name, text in files.items():
        (build / name).parent.mkdir(parents=True, exist_ok=True)
        (build / name).write_text(text)
    artifacts.mkdir()  # as kubetest2 leaves it before the tester runs
    (artifacts / "metadata.json").write_text('{"kubetest-version":"kubetest2 version v1","deployer-version":""}')
    (artifacts / "junit_runner.xml").write_text("")

    assert hand_over(build, artifacts)
    assert {str(p.relative_to(artifacts)) for p in artifacts.rglob("*") if p.is_file()} == {
        "junit_01.xml", "junit_02.xml", "metadata.json", "Pods_should_run_1a2b3c4d/events.yaml", BUILD_LOG_COPY,
        "junit_runner.xml"}
    metadata = json.loads((artifacts / "metadata.json").read_text())
    assert metadata["kubetest-version"] == "kubetest2 version v1" and metadata["job"] == "j"
    assert metadata["job-version"] == "v1.36.3" and metadata["tester-version"].startswith("winsuite ")
    assert (build / "finished.json").is_file(), "the whole build stays where it ran"


def test_a_run_that_wrote_no_build_hands_nothing_over(tmp_path: Path) -> None:
    build = new_build_dir(tmp_path / "winsuite", "b1")
    assert not hand_over(build, tmp_path / "artifacts")
    assert not build.exists() and not (tmp_path / "artifacts").exists()
