"""`winsuite run`, the controller of phases: connect, discover, run parallel then serial, merge, write, summarize."""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from importlib import metadata as importlib_metadata
from pathlib import Path
from types import FrameType
from typing import Any
from typing import TextIO

from winsuite import timeline
from winsuite.authoring.capabilities import Capability
from winsuite.authoring.facts import ClusterFacts
from winsuite.cluster.api_guard import GuardedApiClient
from winsuite.cluster.connect import Connection
from winsuite.errors import ExitCode
from winsuite.errors import UsageError
from winsuite.errors import one_line
from winsuite.k8s import namespaces
from winsuite.k8s import run_leases
from winsuite.k8s.namespaces import delete_run_namespaces
from winsuite.plugin.session import RunSession
from winsuite.plugin.session import open_session
from winsuite.policy import options
from winsuite.policy.catalog import DEFAULT_PACKAGE
from winsuite.policy.catalog import CatalogTest
from winsuite.policy.catalog import collect
from winsuite.policy.catalog import engine_catalog
from winsuite.policy.jobs import apply_overrides
from winsuite.policy.ops_readiness import NO_CASES
from winsuite.policy.prepull_list import to_prepull
from winsuite.policy.run_config import RunConfig
from winsuite.policy.run_config import build_run_config
from winsuite.policy.selection import Outcome
from winsuite.policy.selection import Selector
from winsuite.policy.selection import exact_focus
from winsuite.policy.shard_selection import load_plan_for
from winsuite.policy.shard_selection import shard_tests
from winsuite.policy.shards import Shard
from winsuite.policy.shards import ShardRef
from winsuite.run import credential_scan
from winsuite.run import dashboard
from winsuite.run import node_logs
from winsuite.run import prepull
from winsuite.run.engines.base import PhaseSpec
from winsuite.run.engines.base import RunningPhase
from winsuite.run.engines.ginkgo_phase import UpstreamPhase
from winsuite.run.engines.native import INTERRUPT_GRACE_SECONDS
from winsuite.run.engines.native import PhaseProcess
from winsuite.run.engines.native import job_flags
from winsuite.run.engines.native import pytest_argv
from winsuite.run.engines.together import Together
from winsuite.run.engines.together import split_workers
from winsuite.run.engines.upstream import UpstreamEngine
from winsuite.run.layout import Layout
from winsuite.run.layout import layout_of
from winsuite.run.ops_run import OpsRun
from winsuite.run.plan import PhasePlan
from winsuite.run.plan import plan_run
from winsuite.run.plan import skip_upstream
from winsuite.run.progress import Progress
from winsuite.run.rerun import Rerun
from winsuite.run.results import durations
from winsuite.run.results import junit
from winsuite.run.results import prow
from winsuite.run.results.events import events_name
from winsuite.run.results.merge import CROSS_CHECK_PREFIX
from winsuite.run.results.merge import PhaseRecord
from winsuite.run.results.merge import close_unfinished
from winsuite.run.results.merge import cross_checks
from winsuite.run.results.merge import engine_of
from winsuite.run.results.merge import final_attempts
from winsuite.run.results.merge import read_events
from winsuite.run.results.merge import verdict
from winsuite.run.results.model import Attempt
from winsuite.run.results.prow import DISCOVERY_FILE
from winsuite.run.results.prow import SHARD_METADATA
from winsuite.run.summary import summarize
from winsuite_reports.conventions import junit_name

# e2e.test's namespaces an interrupted ginkgo left take seconds to finalize; the run waits for those (its own
# namespaces it deletes without waiting).
NAMESPACE_DELETE_TIMEOUT = 120.0
DURATIONS_FILE = "winsuite-durations.json"  # the snapshot of durations.json the phases order their tests by


class Runner:
    def __init__(self, run: RunConfig, layout: Layout, flags: list[str], extra: list[str],
                 cases: str = "winsuite.cases") -> None:
        self.run_config = run
        self.cases = cases
        self.layout = layout
        self.flags = flags
        self.extra = extra
        self.abort_reason = ""
        self.kill_now = False
        self.timed_out = False
        self.interruptible = False  # whether a signal stops the current step at once (see _on_signal)
        self.records: dict[int, PhaseRecord] = {}
        self.upstream: UpstreamEngine | None = None  # set once the run knows its cluster
        self.rerun: Rerun | None = None  # the build whose failed tests this run runs again
        self.ops: OpsRun | None = None  # the windows-operational-readiness cases the run's selection comes from
        self.shard: ShardRef | None = None  # --shard I/N: the run is one shard of its selection
        self.shard_plan: list[Shard] | None = None  # --shard-plan: the plan the shards were cut by
        self.on_row: Callable[[int, Attempt, bool], None] | None = None  # (phase, attempt, final) as rows finish
        self.node_logs = "on-failure"  # when node logs are collected (node_logs.MODES)
        self.node_logs_dir = ""  # where they are, relative to the build directory, once collected
        self.connection: Connection | None = None  # the cluster, once connected
        self.api_lost: str | None = None  # why the API server did not serve at the end of the run
        self.log: TextIO = open(os.devnull, "w")  # noqa: SIM115  # replaced by build-log.txt in run()

    @classmethod
    def from_args(cls, args: argparse.Namespace, rerun: Rerun | None = None, ops: OpsRun | None = None) -> Runner:
        if rerun is not None:
            args = rerun.applied_to(args)
        if ops is not None:
            args = ops.applied_to(args)
        get = vars(args).get
        run = build_run_config(options.job_ref(get), options.overrides(get), run_id=get("run_id") or None)
        run_level = {"parallelism": args.parallelism, "run_timeout": args.run_timeout, "artifacts": args.artifacts}
        run = dataclasses.replace(run, job=apply_overrides(run.job, run_level))
        layout = layout_of(run, args.results_root, args.build_id)
        runner = cls(run, layout, job_flags(args), list(args.pytest_args or []), args.cases)
        runner.rerun, runner.ops = rerun, ops
        if getattr(args, "shard", None):
            runner.shard = ShardRef.parse(args.shard)
            plan_file = getattr(args, "shard_plan", None)
            runner.shard_plan = load_plan_for(runner.shard, Path(plan_file)) if plan_file else None
        runner.node_logs = getattr(args, "collect_node_logs", None) or "on-failure"
        return runner

    # -- the run ---------------------------------------------------------------------------------------
    def run(self) -> ExitCode:
        # Handlers first: a signal is never lost, only held while files are being written
        # (see _on_signal), so every interrupted run ends with ABORTED results.
        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            return self._run()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _run(self) -> ExitCode:
        started = time.time()
        self.layout.create()
        self.log = self.layout.build_log.open("a", encoding="utf-8")
        prow.write_started(self.layout.build_dir, started, self._job_metadata())
        self._say(f"winsuite run {self.run_config.run_id}: job {self.run_config.job.name}, "
                  f"target OS {self.run_config.target_os}, results in {self.layout.build_dir}")
        session: RunSession | None = None
        facts: ClusterFacts | None = None
        try:
            self._set_interruptible(True)
            with timeline.span("run: connect and discover"):
                session = self._connect_and_discover()
            self.connection = session.connection
            with timeline.span("run: lease"):
                self._register(session.connection)
            facts = session.facts
            self._run_phases(session, started)
        except KeyboardInterrupt:
            self._say(f"\nwinsuite: {self.abort_reason or 'interrupted'}; writing the results")
            self.abort_reason = self.abort_reason or "interrupted"
        except UsageError as err:
            self._say(f"winsuite: error: {one_line(str(err))}", stream=sys.stderr)
            self._finish(facts, result="FAILURE", error=str(err))
            return err.exit_code
        except Exception as err:  # a bug: say so in one line, keep the traceback in the build log
            self.log.write(traceback.format_exc())
            self._say(f"winsuite: internal error: {one_line(repr(err))} (traceback in {self.layout.build_log})",
                      stream=sys.stderr)
            self._finish(facts, result="FAILURE", error=f"internal error: {one_line(repr(err))}")
            return ExitCode.INTERNAL_ERROR
        finally:
            self._set_interruptible(False)  # cleanup and results are written whatever arrives now
            if session is not None:
                lost = self.api_lost = self._api_lost(session.connection)
                if lost is None:
                    with timeline.span("run: node logs"):
                        self._collect_node_logs(session, started)
                    with timeline.span("run: namespace cleanup"):
                        self._cleanup_namespaces(session.connection)
                else:  # nothing that would wait on it: the run's namespaces are listed for later
                    self._say(f"winsuite: warning: {lost}; node logs not collected and the run's namespaces left "
                              f"(`winsuite cleanup --run-id {self.run_config.run_id}` deletes them once it answers)",
                              stream=sys.stderr)
                with timeline.span("run: cluster logs"):
                    self._collect_cluster_logs(session.connection)
        return self._finish(facts, result=None)

    def _collect_node_logs(self, session: RunSession, started: float) -> None:
        """--collect-node-logs: each node's kubelet, runtime and kube-proxy logs of the run's window, after a run
        with failures (the default) or always."""
        attempts = [a for r in self.records.values() for a in r.attempts]
        failed = any(v in ("failed", "interrupted") for v in map(verdict, final_attempts(attempts).values()))
        if self.node_logs == "never" or (self.node_logs == "on-failure" and not failed and not self.abort_reason):
            return
        try:
            collected = node_logs.collect(session.connection.api, session.facts, self.layout.artifacts, started,
                                          time.time())
        except Exception as err:  # collecting logs must not hide the run's result
            self._say(f"winsuite: warning: node logs not collected: {err}", stream=sys.stderr)
            return
        self.node_logs_dir = f"{self.layout.artifacts.relative_to(self.layout.build_dir)}/{node_logs.NODES_DIR}/"
        for node in collected:
            gaps = "".join(f"\n    not collected: {why}" for why in node.missing)
            self._say(f"node logs of {node.node}: {', '.join(node.written) or 'none'}{gaps}")

    def _selects_a_test_needing(self, capability: Capability) -> bool:
        """Whether a native test the run selects needs `capability` (discovery then observes it at a cost)."""
        policy = self.run_config.policy
        return any(capability in entry.spec.needs and policy.decide(entry.spec.full_name, entry.spec.tags).outcome
                   is not Outcome.DESELECT for entry in collect(self.cases))

    def _connect_and_discover(self) -> RunSession:
        self._say(f"connecting to the cluster ({self.run_config.job.cluster.type})")
        session = open_session(self.run_config, probe_load_balancer=self._selects_a_test_needing(
            Capability.LOAD_BALANCER))
        facts = session.facts
        (self.layout.artifacts / DISCOVERY_FILE).write_text(facts.to_json())
        self.run_config = session.run
        nodes = ", ".join(f"{n.name} ({n.os}{', simulated' if n.simulated else ''})" for n in facts.nodes)
        self._say(f"cluster {session.connection.server} {facts.server_version}: {nodes}")
        for warning in facts.warnings:
            self._say(f"winsuite: warning: {warning}", stream=sys.stderr)
        return session

    def _plan(self, session: RunSession, upstream: UpstreamEngine) -> dict[str, PhasePlan]:
        """How many tests each phase will report (skips included), known before any phase starts."""
        # Upstream specs join winsuite's own catalog; a package of other tests (--cases) runs alone.
        with_upstream = self.cases == DEFAULT_PACKAGE and self.run_config.job.engine != "native"
        names = upstream.names(session.facts.server_version) if with_upstream else []
        natives = collect(self.cases)
        if self.ops is not None:
            self._focus_on_ops_cases([e.spec.full_name for e in natives] + names, session.facts)
        if self.shard is not None:
            self._focus_on_shard(engine_catalog(natives, names, self.run_config.job.engine))
        plan = plan_run(self.run_config, natives, names)
        if any(p.upstream for p in plan.values()):
            reason = session.facts.skip_reason((Capability.RUNS_CONTAINERS,), self.run_config.target_os)
            if reason is not None:
                count = skip_upstream(plan, reason)
                self._say(f"winsuite: {count} upstream spec(s) skipped: {reason}")
        return plan

    def _prepull(self, session: RunSession, deadline: float) -> list[Attempt]:
        """--prepull: the selection's images pulled on the nodes that will run the tests; a row per DaemonSet."""
        config = self.run_config
        images = to_prepull(config, collect(self.cases), session.facts)
        pulls = prepull.pull_sets(config.target_os, images)
        self._say(f"prepull: {len(images)} image reference(s) in {len(pulls)} DaemonSet(s)")
        self._set_interruptible(True)  # a signal stops the prepull, which still removes its DaemonSets
        try:
            rows = prepull.prepull(session.connection.api, pulls, config.placement, config.run_id,
                                   timeout=min(prepull.TIMEOUT, max(1.0, deadline - time.time())), report=self._say)
        finally:
            self._set_interruptible(False)
        for row in rows:
            self._say(f"{row.name}: {row.outcome.value}{': ' + row.details if row.details else ''}")
        return rows

    def _focus_on_ops_cases(self, names: list[str], facts: ClusterFacts) -> None:
        """--ops-readiness: the run (and its phases) select exactly what the cases that apply select."""
        assert self.ops is not None
        self._focus(self.ops.focus(names, facts))
        for selection in self.ops.selections:
            state = selection.not_applicable or f"{len(selection.names)} test(s)"
            self._say(f"ops-readiness {selection.case.category}: {selection.case.description}: {state}")
        for spec in self.ops.empty:
            self._say(f"ops-readiness {spec.category}: {NO_CASES}")

    def _focus_on_shard(self, tests: list[CatalogTest]) -> None:
        """--shard I/N: the run (and its phases) select exactly the tests of its shard of the selection."""
        assert self.shard is not None
        shard = shard_tests(self.run_config, tests, self.shard, self.shard_plan)
        self._focus(exact_focus(list(shard.tests)))
        self._say(f"shard {self.shard}: {len(shard.tests)} test(s), expected {shard.expected:.0f}s"
                  + (" (from the plan file)" if self.shard_plan else " (cut by declared slowness)"))

    def _focus(self, focus: str) -> None:
        """Narrow the selection to `focus` (the skips still apply), for the run and its phases alike."""
        policy = self.run_config.policy
        self.run_config = dataclasses.replace(self.run_config, policy=dataclasses.replace(
            policy, selector=Selector((focus,), policy.selector.skip)))
        self.flags = [f for f in self.flags if not f.startswith("--focus=")] + [f"--focus={focus}"]

    def _run_phases(self, session: RunSession, started: float) -> None:
        upstream = self.upstream = UpstreamEngine(self.run_config, self.layout.artifacts, self.log, self._say)
        with timeline.span("run: plan (catalog, upstream names)"):
            plan = self._plan(session, upstream)
        deadline = started + self.run_config.job.run_timeout
        prepull_rows = self._prepull(session, deadline) if self.run_config.job.prepull else []
        progress = Progress(sum(p.total for p in plan.values()))
        for spec in (PhaseSpec(1, "parallel", self.run_config.job.parallelism), PhaseSpec(2, "serial", 1)):
            phase_plan = plan[spec.name]
            if not phase_plan.total:
                continue
            progress.set_phase(f"phase {spec.number} ({spec.name}, parallelism {spec.workers}): "
                               f"{phase_plan.total} tests")
            record = self.records[spec.number] = PhaseRecord()
            record.attempts, prepull_rows = prepull_rows, []  # the prepull's rows go with the first phase
            for row in phase_plan.upstream_skipped:
                self._record(progress, spec.number, row, True, False)
            record.attempts += upstream.rows(phase_plan.upstream_skipped)
            self._run_engines(spec, phase_plan, session, progress, deadline, record)
            self._write_junit(spec.junit_name, record.attempts)
            if self.abort_reason:
                break
            self._set_interruptible(True)
        if self.run_config.job.engine == "both":
            self._cross_check()
        if self.ops is not None and 1 not in self.records:  # nothing ran: the cases' own rows still say why
            self.records[1] = PhaseRecord()
            self._write_junit(junit_name(1), [])
        progress.close()

    def _write_junit(self, name: str, attempts: list[Attempt]) -> None:
        """The phase's JUnit file; with --ops-readiness, rows carry the category and case that selected them."""
        if self.ops is not None:
            attempts = self.ops.label(name, attempts)
        junit.write(self.layout.artifacts / name, attempts)

    def _cross_check(self) -> None:
        """--engine both: each test both engines ran gets a row saying whether their verdicts agree."""
        for number, record in self.records.items():
            checks = cross_checks(record.attempts)
            if checks:
                record.attempts += checks
                self._write_junit(junit_name(number), record.attempts)
                disagree = [c.name.removeprefix(CROSS_CHECK_PREFIX) for c in checks if c.message]
                self._say(f"engines cross-checked on {len(checks)} test(s); they disagree on {len(disagree)}"
                          + "".join(f"\n  {name}" for name in disagree))

    def _run_engines(self, spec: PhaseSpec, phase_plan: PhasePlan, session: RunSession, progress: Progress,
                     deadline: float, record: PhaseRecord) -> None:
        """The phase's native tests and upstream specs: at the same time in the parallel phase, the run's
        parallelism shared between pytest workers and ginkgo processes; one engine after the other in the serial
        phase, where every test runs alone. Their rows go to `record`."""
        native_count, upstream_names = phase_plan.native, phase_plan.upstream
        workers = min(spec.workers, max(native_count, len(upstream_names)))  # no process without a test
        if native_count and upstream_names and workers >= 2:
            native_workers, ginkgo_procs = split_workers(workers, native_count, len(upstream_names))
            ginkgo = self._upstream_phase(dataclasses.replace(spec, workers=ginkgo_procs), upstream_names, session,
                                          deadline)
            native = self._native_phase(dataclasses.replace(spec, workers=native_workers))
            self._say(f"phase {spec.number}: {native_count} native test(s) on {native_workers} pytest worker(s) "
                      f"and {len(upstream_names)} upstream spec(s) on {ginkgo_procs} ginkgo process(es), together")
            self._set_interruptible(False)  # from here a signal stops the phase, which then writes its results
            with timeline.span(f"phase {spec.number}: pytest with ginkgo and e2e.test"):
                both = Together(spec, [native, ginkgo])
                native.start()
                ginkgo.start()
                self._supervise(both, progress, deadline, record)
            record.attempts += self._close_native(native).attempts + self._upstream_rows(ginkgo)
            return
        if native_count:
            native = self._native_phase(dataclasses.replace(spec, workers=min(workers, native_count)))
            self._set_interruptible(False)
            with timeline.span(f"phase {spec.number}: pytest process"):
                native.start()
                self._supervise(native, progress, deadline, record)
            with timeline.span(f"phase {spec.number}: results"):
                record.attempts += self._close_native(native).attempts
        if upstream_names and not self.abort_reason:
            ginkgo = self._upstream_phase(dataclasses.replace(spec, workers=min(workers, len(upstream_names))),
                                          upstream_names, session, deadline)
            self._set_interruptible(False)
            with timeline.span(f"phase {spec.number}: ginkgo and e2e.test"):
                ginkgo.start()
                self._supervise(ginkgo, progress, deadline, record)
            record.attempts += self._upstream_rows(ginkgo)

    def _upstream_phase(self, spec: PhaseSpec, names: list[str], session: RunSession,
                        deadline: float) -> UpstreamPhase:
        assert self.upstream is not None
        self._set_interruptible(True)  # resolving the toolchain may build e2e.test: a signal stops it
        return self.upstream.phase(spec, names, session, deadline)

    def _upstream_rows(self, ginkgo: UpstreamPhase) -> list[Attempt]:
        assert self.upstream is not None
        return self.upstream.rows(ginkgo.close())

    def _native_phase(self, spec: PhaseSpec) -> PhaseProcess:
        argv = pytest_argv(spec, results_dir=self.layout.artifacts, diagnostics_dir=self.layout.diagnostics_dir,
                           build_dir=self.layout.build_dir, run_id=self.run_config.run_id,
                           discovery=self.layout.artifacts / DISCOVERY_FILE,
                           durations_file=self._durations_snapshot(), job_flags=self.flags,
                           extra=self.extra, cases=self.cases)
        return PhaseProcess(spec, argv, self.layout.artifacts, self.log)

    def _supervise(self, phase: RunningPhase, progress: Progress, deadline: float, record: PhaseRecord) -> None:
        """Follow a running phase until it ends; stop it on a signal or the run timeout."""
        failed_before = {(a.name, engine_of(a)) for a in record.attempts if a.outcome.value == "failed"}
        interrupted_at: float | None = None
        while True:
            code = phase.wait(timeout=0.5)
            for attempt, final in phase.new_attempts():
                key = (attempt.name, engine_of(attempt))
                self._record(progress, phase.spec.number, attempt, final, key in failed_before)
                if attempt.outcome.value == "failed":
                    failed_before.add(key)
            if code is not None:
                return
            progress.refresh()
            if not self.abort_reason and time.time() > deadline:
                self.timed_out = True
                self.abort_reason = f"run timeout of {self.run_config.job.run_timeout:.0f}s reached"
            if self.abort_reason and interrupted_at is None:
                self._say(f"\nwinsuite: {self.abort_reason}; stopping the run and writing its results")
                phase.interrupt(self.abort_reason)
                interrupted_at = time.monotonic()
            if interrupted_at is not None and (
                self.kill_now or time.monotonic() - interrupted_at > INTERRUPT_GRACE_SECONDS
            ):
                self._say("winsuite: the phase did not stop in time; killing it")
                phase.kill()

    def _record(self, progress: Progress, phase: int, attempt: Attempt, final: bool, earlier_failed: bool) -> None:
        """A row as it finishes: on the progress line, and to whoever follows the run's rows (a shard's pod)."""
        progress.record(attempt, final, earlier_failed)
        if self.on_row is not None:
            self.on_row(phase, attempt, final)

    def _close_native(self, phase: PhaseProcess) -> PhaseRecord:
        """The native phase's rows from its event log, whatever state the phase ended in."""
        record = read_events(self.layout.artifacts / events_name(phase.spec.junit_name))
        if record.unfinished:
            # Node ids depend on pytest's rootdir; the file name and test id identify a test either way.
            names = {_short_id(e.nodeid): e.spec.full_name for e in collect(self.cases)}
            close_unfinished(record, phase.interrupted_with or "the phase ended unexpectedly",
                             lambda nodeid: names.get(_short_id(nodeid), nodeid))
        self._write_junit(phase.spec.junit_name, record.attempts)
        code = phase.process.returncode if phase.process else None
        if code not in (0, 1, 2, 5, None, -signal.SIGKILL):
            self._say(f"winsuite: phase {phase.spec.name} ended with pytest exit code {code}; "
                      f"see {self.layout.build_log}", stream=sys.stderr)
            record.interrupted = record.interrupted or f"pytest exited with code {code}"
        return record

    def _register(self, connection: Connection) -> None:
        """Hold the run's Lease, so other runs' cleanup leaves this run's objects alone."""
        try:
            run_leases.register(connection.api, self.run_config.run_id, self.run_config.job.run_timeout)
        except Exception as err:  # e.g. no right to create Leases: the run goes on, only less protected
            self._say(f"winsuite: warning: the run's Lease was not created ({one_line(str(err), 160)}); "
                      "a concurrent run's cleanup could not tell this run is active", stream=sys.stderr)

    @staticmethod
    def _api_lost(connection: Connection) -> str | None:
        """Why the API server does not serve now (None when it does), asked with a short timeout."""
        api = connection.api
        return api.serving_problem() if isinstance(api, GuardedApiClient) else None

    def _durations_snapshot(self) -> Path:
        """This machine's record of the tests' durations, as the run's phases order their tests by it."""
        path = self.layout.artifacts / DURATIONS_FILE
        return path if path.exists() else durations.snapshot(path)

    def _cleanup_namespaces(self, connection: Connection) -> None:
        try:
            self._delete_namespaces(connection)
        except Exception as err:  # cleanup must not hide the run's result; what is left is listed for later
            self._say(f"winsuite: warning: failed to delete the run's namespaces: {one_line(str(err))}; "
                      f"`winsuite cleanup --run-id {self.run_config.run_id}` deletes them once the cluster answers",
                      stream=sys.stderr)

    def _delete_namespaces(self, connection: Connection) -> None:
        # Deleted, not awaited (as upstream's framework does): the namespace controller finishes in the background
        # and nothing of a later run depends on it; the run's ids keep them apart.
        left = delete_run_namespaces(connection.api, run_id=self.run_config.run_id)
        if left:
            self._say(f"deleting {len(left)} namespace(s) of this run that were still there")
        run_leases.withdraw(connection.api, self.run_config.run_id)
        if self.upstream is not None:
            others = run_leases.active_runs(connection.api)
            left = self.upstream.cleanup(connection.api, timeout=NAMESPACE_DELETE_TIMEOUT, other_runs=others)
            if left:
                self._say(f"deleted {len(left)} namespace(s) e2e.test left: {', '.join(left)}")
            elif others:
                self._say(f"e2e.test namespaces left for the last of the active runs to delete: {', '.join(others)}")

    def _collect_cluster_logs(self, connection: Connection) -> None:
        """The cluster's component logs (where the target manages them) into the build, before anything stops."""
        try:
            connection.target.collect_logs(self.layout.cluster_logs_dir)
        except Exception as err:  # logs help diagnose; their absence must not hide the run's result
            self._say(f"winsuite: warning: failed to collect the cluster's logs: {err}", stream=sys.stderr)

    # -- results -----------------------------------------------------------------------------------------
    def _finish(self, facts: ClusterFacts | None, result: str | None, error: str = "") -> ExitCode:
        attempts = [a for r in self.records.values() for a in r.attempts]
        durations.record(a for a in attempts if engine_of(a) == "native" and not a.properties.get("interrupted"))
        verdicts = [verdict(rows) for rows in final_attempts(attempts).values()]
        failed = any(v in ("failed", "interrupted") for v in verdicts)
        if result is None:
            result = "ABORTED" if self.abort_reason else ("FAILURE" if failed else "SUCCESS")
        metadata = self._job_metadata()
        if facts is not None:
            metadata.update(facts.metadata(self.run_config.target_os))
        if self.abort_reason:
            metadata["interrupted"] = self.abort_reason
        if error:
            metadata["error"] = error
        if self.node_logs_dir:
            metadata["node-logs"] = self.node_logs_dir
        with timeline.span("run: credential scan"):
            metadata["credential-scan"] = self._credential_scan(self.layout.build_dir)
        prow.write_finished(self.layout.build_dir, passed=result == "SUCCESS", result=result, metadata=metadata)
        if self.layout.job_dir is not None:
            prow.write_latest_build(self.layout.job_dir, self.layout.build_id)
        with timeline.span("run: dashboard"):
            board = self._dashboard()
        board_dir = dashboard.output_of(self.layout.job_dir) if self.layout.job_dir is not None else None
        if board is not None and board_dir is not None and board_dir.is_dir():
            with timeline.span("run: credential scan"):
                self._credential_scan(board_dir)
        self._say(summarize(attempts, build_dir=self.layout.build_dir, result=result,
                            interrupted=self.abort_reason, dashboard=board))
        self.log.close()
        if self.abort_reason:
            return ExitCode.TIMED_OUT if self.timed_out else ExitCode.INTERRUPTED
        if error:
            return ExitCode.USAGE_ERROR
        if not verdicts:  # a shard may get no test when there are more shards than tests
            return ExitCode.OK if self.shard is not None else ExitCode.NO_TESTS_SELECTED
        return ExitCode.TESTS_FAILED if failed else ExitCode.OK

    def _credential_scan(self, root: Path) -> str:
        """Redact the cluster's credentials wherever the run wrote them under `root`; what the metadata says."""
        connection = self.connection
        api = connection.api if connection is not None and self.api_lost is None else None
        credentials, gap = credential_scan.run_credentials(
            connection.kubeconfig if connection is not None else None, api,
            lambda: namespaces.of_run(api, self.run_config.run_id),
            "no connection" if connection is None else "the API server does not answer")
        self.log.flush()
        files, findings = credential_scan.scan([root], credentials)
        self.log.close()  # the build log may have been rewritten: append to the file now in its place
        self.log = self.layout.build_log.open("a", encoding="utf-8")
        where = root.name if root != self.layout.build_dir else "the build"
        line, status = credential_scan.summary(where, files, findings, gap)
        self._say(line, stream=sys.stderr if findings else None)
        return status

    def _dashboard(self) -> str | None:
        if self.layout.job_dir is None:  # a run without a job directory writes none
            return None
        return dashboard.for_run(self.layout.job_dir,
                                 lambda line, warning: self._say(line, stream=sys.stderr if warning else None))

    def _job_metadata(self) -> dict[str, Any]:
        job = self.run_config.job
        try:
            version = importlib_metadata.version("winsuite")
        except importlib_metadata.PackageNotFoundError:
            version = "unknown"
        return {
            "job": job.name, "dashboard": job.dashboard, "tab": job.tab_name,
            "release-blocking": job.release_blocking, "node-os": job.node_os, "run-id": self.run_config.run_id,
            "winsuite-version": version, "cluster": job.cluster.type, "focus": list(job.focus),
            "skip": list(job.skip), "parallelism": job.parallelism, "flake-attempts": job.flake_attempts,
            "engine": job.engine, "cases": self.cases,
            **({"job-file": str(Path(job.source).resolve())} if Path(job.source).is_file() else {}),
            **(self.rerun.metadata_entries() if self.rerun else {}),
            **({SHARD_METADATA: str(self.shard)} if self.shard else {}),
        }

    # -- plumbing ------------------------------------------------------------------------------------------
    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.abort_reason:
            self.kill_now = True  # a second signal: stop the phase at once, results are still written
        self.abort_reason = self.abort_reason or f"{signal.Signals(signum).name} received"
        if self.interruptible:  # connecting or discovering: stop that at once
            raise KeyboardInterrupt(self.abort_reason)

    def _set_interruptible(self, enabled: bool) -> None:
        """Whether a signal interrupts the current step; a signal held meanwhile takes effect on enabling."""
        self.interruptible = enabled
        if enabled and self.abort_reason:
            raise KeyboardInterrupt(self.abort_reason)

    def _say(self, text: str, stream: TextIO | None = None) -> None:
        print(text, file=stream or sys.stdout, flush=True)
        if not self.log.closed:
            self.log.write(text + "\n")
            self.log.flush()


def _short_id(nodeid: str) -> str:
    path, _, test = nodeid.partition("::")
    return f"{Path(path).name}::{test}"
