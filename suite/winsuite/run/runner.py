"""`winsuite run` on this machine: connect, narrow, run the parallel then the serial phase (winsuite's tests with
pytest, upstream specs with ginkgo), and hand the rows to the finisher that ends every build."""

from __future__ import annotations

import dataclasses
import functools
import signal
import time
from collections.abc import Callable
from pathlib import Path

from winsuite import timeline
from winsuite.authoring.capabilities import Capability
from winsuite.errors import ExitCode
from winsuite.inputs.engines import Engine
from winsuite.inputs.engines import EngineChoice
from winsuite.k8s.run_leases import KeptLease
from winsuite.plugin.session import RunSession
from winsuite.policy.catalog import Entry
from winsuite.policy.catalog import collect
from winsuite.policy.prepull_list import to_prepull
from winsuite.policy.run_config import RunConfig
from winsuite.results import durations
from winsuite.results.build import Build
from winsuite.results.events import events_name
from winsuite.results.merge import CROSS_CHECK_PREFIX
from winsuite.results.merge import close_unfinished
from winsuite.results.merge import cross_checks
from winsuite.results.merge import engine_of
from winsuite.results.merge import read_events
from winsuite.results.model import Attempt
from winsuite.results.prow import BuildResult
from winsuite.run import prepull
from winsuite.run.cleanup import clean_up
from winsuite.run.cleanup import hold_lease
from winsuite.run.console import Console
from winsuite.run.engines.base import PhaseSpec
from winsuite.run.engines.ginkgo_phase import UpstreamPhase
from winsuite.run.engines.native import PhaseProcess
from winsuite.run.engines.native import pytest_argv
from winsuite.run.engines.together import Together
from winsuite.run.engines.together import split_workers
from winsuite.run.engines.upstream import UpstreamEngine
from winsuite.run.evidence import Evidence
from winsuite.run.evidence import Stop
from winsuite.run.evidence import declarations
from winsuite.run.finisher import Finisher
from winsuite.run.finisher import run_error
from winsuite.run.finisher import run_metadata
from winsuite.run.narrowing import selects_a_test_needing
from winsuite.run.narrowing import to_ops_cases
from winsuite.run.narrowing import to_shard
from winsuite.run.observations import Observer
from winsuite.run.ops_run import OpsRun
from winsuite.run.phase_plan import PhasePlan
from winsuite.run.phase_plan import plan_run
from winsuite.run.phase_plan import skip_upstream
from winsuite.run.progress import Progress
from winsuite.run.session import open_session
from winsuite.run.supervisor import Supervisor
from winsuite_reports.conventions import junit_name

RowCallback = Callable[[int, Attempt, bool], None]  # (phase, attempt, whether it is its test's last)


class Runner:
    def __init__(self, run: RunConfig, ops: OpsRun | None = None, on_row: RowCallback | None = None) -> None:
        self.run = run
        self.output = run.layout
        self.ops = ops  # the windows-operational-readiness cases the selection comes from
        self.on_row = on_row  # whoever follows the run's rows as they finish (a shard's pod)
        self.console = Console()
        self.supervisor = Supervisor(time.time(), run.job.run_timeout, self.console.say)
        # With --ops-readiness, rows carry the category and case that selected them.
        self.build = Build(self.output, label=ops.label if ops is not None else None)
        self.upstream: UpstreamEngine | None = None  # set once the run knows its cluster
        self.evidence: Evidence | None = None  # what the run observes of the cluster, while its phases run

    @functools.cached_property
    def natives(self) -> list[Entry]:
        """The test package's specs, collected once per run (narrowing changes the selection, never the package)."""
        return collect(self.run.cases)

    def run_build(self) -> ExitCode:
        """The run from start to its finished build, whatever stops it (signals are held while files are
        written, so every interrupted run ends with ABORTED results)."""
        # Signals are held from before the first file on: one that arrives once started.json is written still ends
        # the run with its results (it takes effect when the run starts connecting).
        with self.supervisor:
            self.output.create()
            self.console.open_log(self.output.build_log)
            self.build.start(self.supervisor.started, run_metadata(self.run))
            self.run.save(self.output.run_file)
            self.console.say(f"winsuite run {self.run.run_id}: job {self.run.job.name} ({self.run.job.why}), target OS "
                             f"{self.run.target_os}, results in {self.output.build_dir}")
            return self._run()

    def _run(self) -> ExitCode:
        session: RunSession | None = None
        lease: KeptLease | None = None
        error, error_code = "", ExitCode.OK
        try:
            self.supervisor.set_interruptible(True)
            with timeline.span("run: connect and discover"):
                session = open_session(self.run, self.console,
                                       probe_load_balancer=selects_a_test_needing(self.run, self.natives,
                                                                                  Capability.LOAD_BALANCER),
                                       ask_permissions=True)
            self.run = session.run
            with timeline.span("run: lease"):
                lease = hold_lease(session.connection.api, self.run, self.console)
            with Observer(session.connection.api) as observer:
                self.evidence = Evidence(observer, session.facts, self.run.target_os,
                                         declarations(e.spec for e in self.natives))
                self._run_phases(session)
        except KeyboardInterrupt:
            self.supervisor.abort_reason = self.supervisor.abort_reason or "interrupted"
            self.console.say(f"\nwinsuite: {self.supervisor.abort_reason}; writing the results")
        except Exception as err:  # a user's mistake or the cluster refusing; a bug (traceback in the build log)
            error, error_code = run_error(err, self.console, self.output.build_log)
        self.supervisor.set_interruptible(False)  # clean-up and results are written whatever arrives now
        finisher = Finisher(self.run, self.console, self.supervisor, self.build)
        if session is not None:
            api = session.connection.api
            try:
                finisher.end_on_cluster(session.connection, session.facts,
                                        lambda: clean_up(api, self.run, self.upstream, self.console))
            finally:
                if lease is not None:
                    lease.stop()
        durations.record((a for a in self.build.rows if engine_of(a) == Engine.NATIVE and not a.properties.interrupted),
                         durations.key_of(self.run))
        return finisher.finish(connection=session.connection if session else None,
                               facts=session.facts if session else None, metadata=run_metadata(self.run),
                               result=BuildResult.FAILURE if error else None, error=error, error_code=error_code)

    # -- planning ------------------------------------------------------------------------------------------
    def _plan(self, session: RunSession, upstream: UpstreamEngine) -> dict[str, PhasePlan]:
        """How many tests each phase will report (skips included), known before any phase starts; the run
        narrowed to its ops-readiness cases or its shard first, and written down as every phase will see it."""
        names = upstream.names(session.facts.server_version) if self.run.with_upstream else []
        natives = self.natives
        if self.ops is not None:
            self.run = to_ops_cases(self.run, self.ops, [e.spec.full_name for e in natives] + names, session.facts,
                                    self.console.say)
        if self.run.shard is not None:
            self.run = to_shard(self.run, natives, names, self.console.say)
        self.run.save(self.output.run_file)
        plan = plan_run(self.run, natives, names)
        if any(p.upstream for p in plan.values()):
            reason = session.facts.skip_reason((Capability.RUNS_CONTAINERS,), self.run.target_os)
            if reason is not None:
                count = skip_upstream(plan, reason)
                self.console.say(f"winsuite: {count} upstream spec(s) skipped: {reason}")
        return plan

    def _prepull(self, session: RunSession) -> list[Attempt]:
        """--prepull: the selection's images pulled on the nodes that will run the tests; a row per DaemonSet."""
        run = self.run
        images = to_prepull(run, self.natives, session.facts)
        pulls = prepull.pull_sets(run.target_os, images)
        self.console.say(f"prepull: {len(images)} image reference(s) in {len(pulls)} DaemonSet(s)")
        self.supervisor.set_interruptible(True)  # a signal stops the prepull, which still removes its DaemonSets
        try:
            timeout = min(prepull.TIMEOUT, max(1.0, self.supervisor.deadline - time.time()))
            placement = run.placement.avoiding(session.facts.simulated_nodes())  # a pull there would "succeed"
            rows = prepull.prepull(session.connection.api, pulls, placement, run.run_id, timeout=timeout,
                                   report=self.console.say)
        finally:
            self.supervisor.set_interruptible(False)
        for row in rows:
            self.console.say(f"{row.name}: {row.outcome.value}{': ' + row.details if row.details else ''}")
        return rows

    # -- phases --------------------------------------------------------------------------------------------
    def _run_phases(self, session: RunSession) -> None:
        upstream = self.upstream = UpstreamEngine(self.run, self.output.artifacts, self.console.log,
                                                       self.console.say)
        with timeline.span("run: plan (catalog, upstream names)"):
            plan = self._plan(session, upstream)
        prepull_rows = self._prepull(session) if self.run.job.prepull else []
        progress = Progress(sum(p.total for p in plan.values()))
        for spec in (PhaseSpec(1, "parallel", self.run.job.parallelism), PhaseSpec(2, "serial", 1)):
            phase_plan = plan[spec.name]
            if not phase_plan.total:
                continue
            progress.set_phase(f"phase {spec.number} ({spec.name}, parallelism {spec.workers}): "
                               f"{phase_plan.total} tests")
            for row in phase_plan.upstream_skipped:
                self._record(progress, spec.number, row, True, False)
            # The prepull's rows go with the first phase.
            self.build.judged(spec.junit_name, prepull_rows + upstream.rows(phase_plan.upstream_skipped))
            prepull_rows = []
            self._run_engines(spec, phase_plan, session, progress)
            if self.supervisor.abort_reason:
                break
            self.supervisor.set_interruptible(True)
        if self.run.job.engine == EngineChoice.BOTH:
            self._cross_check()
        if self.ops is not None and junit_name(1) not in self.build.phases:  # nothing ran: the cases' rows say why
            self.build.judged(junit_name(1), [])
        progress.close()

    def _run_engines(self, spec: PhaseSpec, phase_plan: PhasePlan, session: RunSession, progress: Progress) -> None:
        """The phase's native tests and upstream specs: at the same time in the parallel phase, the run's
        parallelism shared between pytest workers and ginkgo processes; one engine after the other in the serial
        phase, where every test runs alone. Their rows go to the build as they finish, then judged."""
        native_count, upstream_names = phase_plan.native, phase_plan.upstream
        workers = min(spec.workers, max(native_count, len(upstream_names)))  # no process without a test
        if native_count and upstream_names and workers >= 2:
            native_workers, ginkgo_procs = split_workers(workers, native_count, len(upstream_names))
            ginkgo = self._upstream_phase(dataclasses.replace(spec, workers=ginkgo_procs), upstream_names, session)
            native = self._native_phase(dataclasses.replace(spec, workers=native_workers))
            self.console.say(f"phase {spec.number}: {native_count} native test(s) on {native_workers} pytest "
                             f"worker(s) and {len(upstream_names)} upstream spec(s) on {ginkgo_procs} ginkgo "
                             "process(es), together")
            self.supervisor.set_interruptible(False)  # from here a signal stops the phase, which writes its results
            with timeline.span(f"phase {spec.number}: pytest with ginkgo and e2e.test"):
                native.start()
                ginkgo.start()
                self._follow(Together(spec, [native, ginkgo]), progress)
            self.build.judged(spec.junit_name, self._close_native(native) + self._upstream_rows(ginkgo))
            return
        if native_count:
            native = self._native_phase(dataclasses.replace(spec, workers=min(workers, native_count)))
            self.supervisor.set_interruptible(False)
            with timeline.span(f"phase {spec.number}: pytest process"):
                native.start()
                self._follow(native, progress)
            with timeline.span(f"phase {spec.number}: results"):
                self.build.judged(spec.junit_name, self._close_native(native))
        if upstream_names and not self.supervisor.abort_reason:
            ginkgo = self._upstream_phase(dataclasses.replace(spec, workers=min(workers, len(upstream_names))),
                                          upstream_names, session)
            self.supervisor.set_interruptible(False)
            with timeline.span(f"phase {spec.number}: ginkgo and e2e.test"):
                ginkgo.start()
                self._follow(ginkgo, progress)
            self.build.judged(spec.junit_name, self._upstream_rows(ginkgo))

    def _follow(self, phase: PhaseProcess | UpstreamPhase | Together, progress: Progress) -> None:
        self.supervisor.follow(phase, lambda number, attempt, final, earlier_failed: self._record(
            progress, number, attempt, final, earlier_failed), self.build.rows_of(phase.spec.junit_name),
            progress.refresh)

    def _upstream_phase(self, spec: PhaseSpec, names: list[str], session: RunSession) -> UpstreamPhase:
        assert self.upstream is not None
        self.supervisor.set_interruptible(True)  # resolving the toolchain may build e2e.test: a signal stops it
        return self.upstream.phase(spec, names, session, self.supervisor.deadline)

    def _upstream_rows(self, ginkgo: UpstreamPhase) -> list[Attempt]:
        assert self.upstream is not None
        return self._judged(self.upstream.rows(ginkgo.close()))

    def _judged(self, rows: list[Attempt]) -> list[Attempt]:
        """Each row with where its pods ran and, failed, why: from what the run observed (evidence.py)."""
        if self.evidence is None:
            return rows
        stop = Stop(self.supervisor.abort_reason, self.supervisor.timed_out)
        return self.evidence.judge_all(rows, stop, self.output.build_dir)

    def _native_phase(self, spec: PhaseSpec) -> PhaseProcess:
        snapshot = self.output.artifacts / durations.SNAPSHOT_FILE  # the record the phases order their tests by
        if not snapshot.exists():
            durations.snapshot(snapshot, durations.key_of(self.run))
        argv = pytest_argv(spec, run_file=self.output.run_file, cases=self.run.cases, extra=self.run.pytest_args)
        return PhaseProcess(spec, argv, self.output.artifacts, self.console.log)

    def _record(self, progress: Progress, phase: int, attempt: Attempt, final: bool, earlier_failed: bool) -> None:
        """A row as it finishes: on the progress line, in the build, and to whoever follows the run's rows (a shard's
        pod)."""
        progress.record(attempt, final, earlier_failed)
        self.build.row_finished(junit_name(phase), attempt)
        if self.on_row is not None:
            self.on_row(phase, attempt, final)

    def _close_native(self, phase: PhaseProcess) -> list[Attempt]:
        """The native phase's rows from its event log, whatever state the phase ended in, judged."""
        record = read_events(self.output.artifacts / events_name(phase.spec.junit_name))
        if record.unfinished:
            # Node ids depend on pytest's rootdir; the file name and test id identify a test either way.
            names = {_short_id(e.nodeid): e.spec.full_name for e in self.natives}
            close_unfinished(record, phase.interrupted_with or "the phase ended unexpectedly",
                             lambda nodeid: names.get(_short_id(nodeid), nodeid))
        code = phase.process.returncode if phase.process else None
        if code not in (0, 1, 2, 5, None, -signal.SIGKILL):
            self.console.say(f"winsuite: phase {phase.spec.name} ended with pytest exit code {code}; "
                             f"see {self.output.build_log}", warning=True)
        return self._judged(record.attempts)

    def _cross_check(self) -> None:
        """--engine both: each test both engines ran gets a row saying whether their verdicts agree."""
        for phase in self.build.phases:
            checks = cross_checks(self.build.rows_of(phase))
            if checks:
                self.build.judged(phase, checks)
                disagree = [c.name.removeprefix(CROSS_CHECK_PREFIX) for c in checks if c.message]
                self.console.say(f"engines cross-checked on {len(checks)} test(s); they disagree on "
                                 f"{len(disagree)}" + "".join(f"\n  {name}" for name in disagree))


def _short_id(nodeid: str) -> str:
    path, _, test = nodeid.partition("::")
    return f"{Path(path).name}::{test}"

