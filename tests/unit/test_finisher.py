"""The end of every build without a cluster (connection None): finished.json once, with its enum result and the
metadata that explains it, and the exit code each outcome ends with."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from winsuite.cluster.connect import Connection
from winsuite.cluster.kubeconfig import KubeconfigTarget
from winsuite.errors import ExitCode
from winsuite.policy.run_config import Output
from winsuite.policy.run_config import RunConfig
from winsuite.policy.run_config import resolve_run
from winsuite.policy.shards import ShardRef
from winsuite.results.build import Build
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.results.prow import BuildResult
from winsuite.run.console import Console
from winsuite.run.finisher import Finisher
from winsuite.run.finisher import exit_code
from winsuite.run.finisher import run_metadata
from winsuite.run.supervisor import Supervisor
from winsuite_reports.conventions import FailureClass
from winsuite_reports.conventions import RowProperties

RUN_ID = "20261125000000-abcd"


def run_of(tmp_path: Path, **flags: Any) -> RunConfig:
    """A run whose build sits in tmp_path without a job directory: no latest-build.txt, no dashboard."""
    run = resolve_run("embedded", flags, environ={}, run_id=RUN_ID)
    return dataclasses.replace(run, output=Output(tmp_path / "build", "20261125000000"))


def row(name: str, outcome: Outcome, number: int = 1, failure_class: str = "") -> Attempt:
    return Attempt(name, "", outcome, attempt=number, message="boom" if outcome is Outcome.FAILED else "",
                   properties=RowProperties(engine="native", failure_class=failure_class))


def finish(run: RunConfig, rows: list[Attempt], *, abort: str = "", timed_out: bool = False,
           **kwargs: Any) -> tuple[ExitCode, dict[str, Any]]:
    supervisor = Supervisor(time.time(), run.job.run_timeout, print)
    supervisor.abort_reason, supervisor.timed_out = abort, timed_out
    build = Build(run.layout)
    build.judged("junit_01.xml", rows)
    code = Finisher(run, Console(), supervisor, build).finish(connection=None, facts=None,
                                                              metadata=run_metadata(run), **kwargs)
    with pytest.raises(ValueError, match=r"finished\.json is written once"):
        build.finish(BuildResult.SUCCESS, {})
    return code, json.loads((run.layout.build_dir / "finished.json").read_text())


def test_a_failed_test_fails_the_build_with_the_metadata_that_explains_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = run_of(tmp_path)
    code, finished = finish(run, [row("a", Outcome.PASSED), row("b", Outcome.FAILED, failure_class="test")])
    assert code is ExitCode.TESTS_FAILED
    assert (finished["result"], finished["passed"]) == ("FAILURE", False)
    metadata = finished["metadata"]
    assert metadata["run-id"] == RUN_ID and metadata["job"] == "winsuite-embedded"
    assert metadata["failure-classes"] == {str(FailureClass.TEST): 1} and metadata["flaky"] == 0
    assert metadata["credential-scan"].startswith("incomplete: ")  # no cluster: its Secrets were not looked for
    assert "interrupted" not in metadata and "error" not in metadata
    assert json.loads((run.layout.artifacts / "metadata.json").read_text()) == metadata
    assert "winsuite: FAILURE\n" in capsys.readouterr().out


def test_a_passing_build_succeeds(tmp_path: Path) -> None:
    code, finished = finish(run_of(tmp_path), [row("a", Outcome.PASSED), row("s", Outcome.SKIPPED)])
    assert (code, finished["result"], finished["passed"]) == (ExitCode.OK, "SUCCESS", True)


@pytest.mark.parametrize(("fail_on_flaky", "result", "code"), [(False, "SUCCESS", ExitCode.OK),
                                                               (True, "FAILURE", ExitCode.TESTS_FAILED)])
def test_a_flake_fails_the_build_only_under_fail_on_flaky_and_says_so(
        tmp_path: Path, fail_on_flaky: bool, result: str, code: ExitCode) -> None:
    rows = [row("a", Outcome.FAILED), row("a", Outcome.PASSED, 2)]
    ended, finished = finish(run_of(tmp_path, fail_on_flaky=fail_on_flaky), rows)
    assert (ended, finished["result"], finished["metadata"]["flaky"]) == (code, result, 1)
    assert ("flaky-policy" in finished["metadata"]) is fail_on_flaky


@pytest.mark.parametrize(("timed_out", "code"), [(False, ExitCode.INTERRUPTED), (True, ExitCode.TIMED_OUT)])
def test_an_aborted_run_ends_aborted_saying_why(tmp_path: Path, timed_out: bool, code: ExitCode) -> None:
    ended, finished = finish(run_of(tmp_path), [row("a", Outcome.PASSED)], abort="SIGINT received",
                             timed_out=timed_out)
    assert (ended, finished["result"], finished["passed"]) == (code, "ABORTED", False)
    assert finished["metadata"]["interrupted"] == "SIGINT received"


def test_a_run_that_ended_with_an_error_fails_with_the_errors_exit_code(tmp_path: Path) -> None:
    code, finished = finish(run_of(tmp_path), [], result=BuildResult.FAILURE, error="bad job",
                            error_code=ExitCode.USAGE_ERROR)
    assert (code, finished["result"], finished["metadata"]["error"]) == (ExitCode.USAGE_ERROR, "FAILURE", "bad job")


@pytest.mark.parametrize(("result", "rows", "is_shard", "code"), [
    (BuildResult.SUCCESS, [row("a", Outcome.PASSED)], False, ExitCode.OK),
    (BuildResult.FAILURE, [row("a", Outcome.FAILED)], False, ExitCode.TESTS_FAILED),
    (BuildResult.FAILURE, [row("a", Outcome.PASSED)], False, ExitCode.TESTS_FAILED),  # a flake, a lost shard
    (BuildResult.SUCCESS, [row("a", Outcome.INTERRUPTED)], False, ExitCode.TESTS_FAILED),
    (BuildResult.SUCCESS, [], False, ExitCode.NO_TESTS_SELECTED),
    (BuildResult.SUCCESS, [], True, ExitCode.OK),  # more shards than tests
])
def test_the_exit_code_of_each_outcome(result: BuildResult, rows: list[Attempt], is_shard: bool,
                                       code: ExitCode) -> None:
    assert exit_code(Supervisor(time.time(), 60, print), result, rows, is_shard=is_shard) is code


def test_a_shard_with_no_test_succeeds(tmp_path: Path) -> None:
    run = dataclasses.replace(run_of(tmp_path), shard=ShardRef(3, 3))
    code, finished = finish(run, [])
    assert (code, finished["result"], finished["metadata"]["shard"]) == (ExitCode.OK, "SUCCESS", "3/3")


TOKEN = "planted-bearer-token-5d41402abc4b2a76"


def test_a_token_in_a_failure_message_is_found_in_the_summary_the_build_log_holds(tmp_path: Path) -> None:
    """The summary (failure messages, skip reasons) is the build log's last text: it is written before the credential
    scan reads the build, so a credential a test printed into its failure is redacted there, and the run says so."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "c",
                                          "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                                          "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                                          "users": [{"name": "u", "user": {"token": TOKEN}}]}))
    configuration = client.Configuration()
    configuration.host = "https://127.0.0.1:1"
    connection = Connection(KubeconfigTarget(kubeconfig), client.ApiClient(configuration), "v1.36.3", kubeconfig,
                            None)
    run = run_of(tmp_path)
    console = Console()
    console.open_log(run.layout.build_log)
    build = Build(run.layout)
    build.judged("junit_01.xml", [Attempt("leaky", "", Outcome.FAILED, message=f"Authorization: Bearer {TOKEN}")])
    finisher = Finisher(run, console, Supervisor(time.time(), run.job.run_timeout, print), build)
    finisher.api_lost = "connection refused"  # as end_on_cluster finds it: no server, so no Secrets to ask for
    finisher.finish(connection=connection, facts=None, metadata=run_metadata(run))
    log = run.layout.build_log.read_text()
    assert "FAIL leaky\n       Authorization: Bearer <redacted>" in log and TOKEN not in log
    finished = json.loads((run.layout.build_dir / "finished.json").read_text())
    assert finished["metadata"]["credential-scan"].startswith("redacted ")
