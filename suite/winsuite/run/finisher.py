"""Finishing a build, the one way for every run (here or inside the cluster): node logs, the cluster's clean-up and
logs, the credential scan, finished.json, latest-build.txt, the dashboard, the summary and the exit code."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from winsuite import timeline
from winsuite.authoring.environment import image_registries
from winsuite.authoring.facts import ClusterFacts
from winsuite.cluster.api_guard import GuardedApiClient
from winsuite.cluster.connect import Connection
from winsuite.errors import ExitCode
from winsuite.errors import UsageError
from winsuite.errors import one_line
from winsuite.inputs.run_modes import NodeLogMode
from winsuite.k8s import namespaces
from winsuite.k8s.api_answer import credentials_refused
from winsuite.policy.run_config import RunConfig
from winsuite.results import prow
from winsuite.results.build import Build
from winsuite.results.merge import final_attempts
from winsuite.results.merge import verdict
from winsuite.results.model import Attempt
from winsuite.results.prow import BuildResult
from winsuite.run import credential_scan
from winsuite.run import dashboard
from winsuite.run import node_logs
from winsuite.run.console import Console
from winsuite.run.summary import evidence_counts
from winsuite.run.summary import result_reasons
from winsuite.run.summary import summarize
from winsuite.run.supervisor import Supervisor

FAILING_VERDICTS = ("failed", "interrupted")


def run_metadata(run: RunConfig) -> dict[str, Any]:
    """What started.json and finished.json say of how the run was asked for."""
    job = run.job
    try:
        version = importlib_metadata.version("winsuite")
    except importlib_metadata.PackageNotFoundError:
        version = "unknown"
    return {
        "job": job.name, "dashboard": job.dashboard, "tab": job.tab_name,
        "release-blocking": job.release_blocking, "node-os": str(job.node_os), "run-id": run.run_id,
        "winsuite-version": version, "cluster": str(job.cluster.type), "focus": list(job.focus),
        "skip": list(job.skip), "parallelism": job.parallelism, "flake-attempts": job.flake_attempts,
        "engine": str(job.engine), "cases": run.cases,
        "image-registries": image_registries(run.repo_list.registries, run.images.default_registries),
        **({"job-file": str(Path(job.source).resolve())} if Path(job.source).is_file() else {}),
        **({prow.SHARD_METADATA: str(run.shard)} if run.shard else {}),
        **run.metadata,
    }


def run_error(err: Exception, console: Console, log: Path) -> tuple[str, ExitCode]:
    """What ended a run before its end, said in one line (a bug's traceback kept in the build log), as finished.json
    records it, and the exit code it ends with."""
    err = credentials_refused(err) or err
    if isinstance(err, UsageError):
        console.say(f"winsuite: error: {one_line(str(err))}", warning=True)
        return str(err), err.exit_code
    console.write(traceback.format_exc())
    console.say(f"winsuite: internal error: {one_line(repr(err))} (traceback in {log})", warning=True)
    return f"internal error: {one_line(repr(err))}", ExitCode.INTERNAL_ERROR


def has_failures(rows: list[Attempt]) -> bool:
    return any(verdict(r) in FAILING_VERDICTS for r in final_attempts(rows).values())


class Finisher:
    def __init__(self, run: RunConfig, console: Console, supervisor: Supervisor, build: Build) -> None:
        self.run = run
        self.output = run.layout
        self.console = console
        self.supervisor = supervisor
        self.build = build  # the rows it ends with, and the one writer of its finished.json
        self.node_logs_dir = ""  # relative to the build directory, once collected
        self.api_lost: str | None = None  # why the API server did not serve at the end of the run

    def end_on_cluster(self, connection: Connection, facts: ClusterFacts | None, cleanup: Callable[[], None]) -> None:
        """Node logs and the run's clean-up while the API server serves (listed for later when it does not),
        then the cluster's component logs."""
        lost = self.api_lost = _serving_problem(connection)
        if lost is None:
            if facts is not None:
                with timeline.span("run: node logs"):
                    self._collect_node_logs(connection, facts, self.build.rows)
            with timeline.span("run: clean-up"):
                cleanup()
        else:  # nothing that would wait on it: the run's namespaces are listed for later
            self.console.say(f"winsuite: warning: {lost}; node logs not collected and the run's namespaces left "
                             f"(`winsuite cleanup --run-id {self.run.run_id}` deletes them once it answers)",
                             warning=True)
        with timeline.span("run: cluster logs"):
            try:
                connection.target.collect_logs(self.output.cluster_logs_dir)
            except Exception as err:  # logs help diagnose; their absence must not hide the run's result
                self.console.say(f"winsuite: warning: failed to collect the cluster's logs: {err}", warning=True)

    def _collect_node_logs(self, connection: Connection, facts: ClusterFacts, rows: list[Attempt]) -> None:
        """--collect-node-logs: each node's kubelet, runtime and kube-proxy logs of the run's window, after a run
        with failures (the default) or always."""
        mode = self.run.node_logs
        wanted = self.supervisor.abort_reason or has_failures(rows)
        if mode is NodeLogMode.NEVER or (mode is NodeLogMode.ON_FAILURE and not wanted):
            return
        try:
            collected = node_logs.collect(connection.api, facts, self.output.artifacts, self.supervisor.started,
                                          time.time())
        except Exception as err:  # collecting logs must not hide the run's result
            self.console.say(f"winsuite: warning: node logs not collected: {one_line(str(err))}", warning=True)
            return
        self.node_logs_dir = f"{self.output.artifacts.relative_to(self.output.build_dir)}/{node_logs.NODES_DIR}/"
        for node in collected:
            gaps = "".join(f"\n    not collected: {why}" for why in node.missing)
            self.console.say(f"node logs of {node.node}: {', '.join(node.written) or 'none'}{gaps}")

    def finish(self, *, connection: Connection | None, facts: ClusterFacts | None, metadata: dict[str, Any],
               result: BuildResult | None = None, error: str = "",
               error_code: ExitCode = ExitCode.USAGE_ERROR) -> ExitCode:
        """The summary into the build log, then the credential scan of the whole build (the summary's failure messages
        and skip reasons included), finished.json, latest-build.txt, the dashboard, the summary on the terminal; the
        exit code (`error_code` when the run ended with `error`)."""
        rows = self.build.rows
        aborted = self.supervisor.abort_reason
        if result is None:
            result = BuildResult.ABORTED if aborted else (
                BuildResult.FAILURE if has_failures(rows) or error else BuildResult.SUCCESS)
        evidence = evidence_counts(final_attempts(rows))
        metadata = {**metadata, **evidence.metadata()}
        if result is BuildResult.SUCCESS and evidence.flaky and self.run.job.fail_on_flaky:
            result = BuildResult.FAILURE
            metadata["flaky-policy"] = f"{evidence.flaky} test(s) passed only on a retry; the job fails on flakes"
        if facts is not None:
            metadata.update(facts.metadata(self.run.target_os, self.run.job.runtime_class))
        if aborted:
            metadata["interrupted"] = aborted
        if error:
            metadata["error"] = error
        if self.node_logs_dir:
            metadata["node-logs"] = self.node_logs_dir
        # The build log's last words are written before the scan reads it: nothing unscanned is published.
        self.console.write(summarize(rows, build_dir=self.output.build_dir, result=result, interrupted=aborted,
                                     dashboard=None, reasons=result_reasons(metadata)) + "\n")
        with timeline.span("run: credential scan"):
            metadata["credential-scan"] = self._credential_scan(self.output.build_dir, connection)
        self.build.finish(result, metadata)
        with timeline.span("run: dashboard"):
            board = self._dashboard(connection)
        self.console.show(summarize(rows, build_dir=self.output.build_dir, result=result, interrupted=aborted,
                                    dashboard=board, reasons=result_reasons(metadata)))
        self.console.close()
        if error and not aborted:
            return error_code
        return exit_code(self.supervisor, result, rows, is_shard=self.run.shard is not None)

    def _credential_scan(self, root: Path, connection: Connection | None) -> str:
        """Redact the cluster's credentials wherever the run wrote them under `root`; what the metadata says."""
        api = connection.api if connection is not None and self.api_lost is None else None
        credentials, gaps = credential_scan.run_credentials(
            connection.kubeconfig if connection is not None else None,
            connection.api if connection is not None else None, api,
            lambda: namespaces.of_run(api, self.run.run_id),
            "no connection" if connection is None else "the API server does not answer")
        files, findings = credential_scan.scan([root], credentials, gaps)
        self.console.reopen()
        where = root.name if root != self.output.build_dir else "the build"
        line, status = credential_scan.summary(where, files, findings, gaps)
        self.console.say(line, warning=bool(findings))
        return status

    def _dashboard(self, connection: Connection | None) -> str | None:
        job_dir = self.output.job_dir
        if job_dir is None:  # a run without a job directory writes none
            return None
        board = dashboard.for_run(job_dir, lambda line, warning: self.console.say(line, warning=warning))
        board_dir = dashboard.output_of(job_dir)
        if board_dir.is_dir():
            with timeline.span("run: credential scan"):
                self._credential_scan(board_dir, connection)
        return board


def exit_code(supervisor: Supervisor, result: BuildResult, rows: list[Attempt], *, is_shard: bool) -> ExitCode:
    """The README's exit codes of a run that ended without an error of its own, decided in one place."""
    if supervisor.exit_code is not None:
        return supervisor.exit_code
    if not rows:  # a shard may get no test when there are more shards than tests
        return ExitCode.OK if is_shard else ExitCode.NO_TESTS_SELECTED
    return ExitCode.TESTS_FAILED if not result.passed or has_failures(rows) else ExitCode.OK


def _serving_problem(connection: Connection) -> str | None:
    """Why the API server does not serve now (None when it does), asked with a short timeout."""
    api = connection.api
    return api.serving_problem() if isinstance(api, GuardedApiClient) else None
