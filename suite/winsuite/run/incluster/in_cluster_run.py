"""`winsuite run --in-cluster`: the run's shards as the pods of an Indexed Job, followed from here, made one build.

Start: plan the shards, create the run's namespace, service account, binding, ConfigMap and Job (objects.py). Follow:
every shard's log (follow.py), rows shown and written as they arrive, each shard's build received whole at its end.
Finish: a shard whose pod died becomes a build of the rows it sent plus an interrupted row for each test it did not
finish; the shard builds, as objects (received.py), are merged into this run's build (shard_merge.py); everything of
the run is deleted.
`--detach` stops after the start; `winsuite attach BUILD` does the rest from the run document and state kept in
the build. Signals, the run timeout and the end of the build are the same as for a run here (supervisor.py,
finisher.py).
"""

from __future__ import annotations

import dataclasses
import queue
import time
from pathlib import Path

from winsuite.authoring.facts import ClusterFacts
from winsuite.cluster.connect import Connection
from winsuite.errors import ExitCode
from winsuite.errors import one_line
from winsuite.inputs.engines import Engine
from winsuite.k8s import run_leases
from winsuite.k8s.namespaces import delete_run_namespaces
from winsuite.policy.run_config import RunConfig
from winsuite.policy.shards import ShardRef
from winsuite.results import prow
from winsuite.results.build import Build
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.results.prow import DISCOVERY_FILE
from winsuite.results.prow import BuildResult
from winsuite.run.console import Console
from winsuite.run.finisher import Finisher
from winsuite.run.incluster import protocol
from winsuite.run.incluster.follow import Ended
from winsuite.run.incluster.follow import ShardLog
from winsuite.run.incluster.objects import RunObjects
from winsuite.run.incluster.objects import delete
from winsuite.run.incluster.objects import stop_job
from winsuite.run.incluster.progress import ShardProgress
from winsuite.run.incluster.received import ArchiveFiles
from winsuite.run.incluster.state import InClusterState
from winsuite.run.shard_files import own_dir
from winsuite.run.shard_merge import ShardBuild
from winsuite.run.shard_merge import finished_metadata
from winsuite.run.shard_merge import merge_into
from winsuite.run.shard_merge import merged_metadata
from winsuite.run.shard_merge import merged_result
from winsuite.run.shard_merge import read_shard_build
from winsuite.run.supervisor import Supervisor
from winsuite_reports.conventions import ARTIFACTS
from winsuite_reports.conventions import STARTED
from winsuite_reports.conventions import FailureClass
from winsuite_reports.conventions import RowProperties
from winsuite_reports.conventions import junit_name
from winsuite_reports.prow import MalformedJson
from winsuite_reports.prow import read_json_object

STOP_GRACE_SECONDS = 20.0  # after SIGINT/SIGTERM: how long shards get to send what they finished


class Shard:
    """One shard as the run sees it: its tests, the rows it sent, its build once received."""

    def __init__(self, number: int, tests: list[str]) -> None:
        self.number = number
        self.tests = tests
        self.rows: list[Attempt] = []
        self.phase_of_row: list[int] = []
        self.finished_tests: set[str] = set()  # tests whose last attempt arrived
        self.build = protocol.BuildReceiver()
        self.log: list[str] = []
        self.ended: Ended | None = None


class InClusterRun:
    def __init__(self, run: RunConfig, state: InClusterState, connection: Connection) -> None:
        self.run = run
        self.state = state
        self.output = run.layout
        self.connection = connection
        self.objects = RunObjects(run.run_id)
        self.shards = [Shard(i + 1, list(tests)) for i, tests in enumerate(state.shards)]
        self.console = Console()
        self.supervisor = Supervisor(state.started, run.job.run_timeout, self.console.say)
        self.build = Build(self.output)  # started where the run was made (start.py), maybe by another process

    @property
    def metadata(self) -> dict[str, object]:
        """What the build says of the run inside the cluster."""
        return {"namespace": self.objects.namespace, "image": self.state.image, "shards": len(self.shards),
                "expected-seconds": list(self.state.expected)}

    # -- following ------------------------------------------------------------------------------------------
    def follow(self) -> ExitCode:
        """Follow every shard to its end (or to a signal, or the run timeout), then finish the run."""
        with self.supervisor:
            return self.follow_supervised()

    def follow_supervised(self) -> ExitCode:
        """`follow`, inside the run's supervisor (entered by whoever made the Job, so a signal while it was made is
        held until the shards can be stopped)."""
        self.console.open_log(self.output.build_log)
        self._follow_shards()
        return self.finish()

    def _follow_shards(self) -> None:
        lines: queue.Queue[tuple[int, str | Ended]] = queue.Queue()
        readers = [ShardLog(self.connection.api, self.objects, s.number - 1, lines) for s in self.shards]
        total = sum(len(s.tests) for s in self.shards)
        progress = ShardProgress(total, {s.number: len(s.tests) for s in self.shards})
        progress.set_phase(f"{len(self.shards)} shard(s) in namespace {self.objects.namespace}: {total} tests")
        for reader in readers:
            reader.start()
        stop_asked: float | None = None
        try:
            while any(s.ended is None for s in self.shards):
                try:
                    index, item = lines.get(timeout=0.5)
                except queue.Empty:
                    progress.refresh()
                else:
                    self._take(self.shards[index], item, progress)
                self.supervisor.check_deadline()
                abort = self.supervisor.abort_reason
                if abort and stop_asked is None:
                    self.console.say(f"\nwinsuite: {abort}; stopping the shards")
                    stop_job(self.connection.api, self.objects)
                    stop_asked = time.monotonic()
                if stop_asked is not None and (self.supervisor.stop_now
                                               or time.monotonic() - stop_asked > STOP_GRACE_SECONDS):
                    for shard in self.shards:
                        shard.ended = shard.ended or Ended(f"stopped: {abort}")
        finally:
            for reader in readers:
                reader.stopping.set()
        progress.close()

    def _take(self, shard: Shard, item: str | Ended, progress: ShardProgress) -> None:
        if isinstance(item, Ended):
            shard.ended = item
            if not shard.build.complete:
                state = f"lost: {item.why or shard.build.problem}"
            else:  # its pod may still be lost on its way out: said, though the build decides (see _shard_build)
                state = f"sent its build; then {item.why}" if item.why else "finished"
            progress.line(f"shard {shard.number}/{len(self.shards)} {state}")
            return
        message = protocol.parse(item)
        if message is None:
            shard.log.append(item)
        elif message.kind is protocol.Kind.ROW:
            attempt, final = message.attempt, bool(message.fields.get("final"))
            earlier_failed = any(r.name == attempt.name and r.outcome is Outcome.FAILED for r in shard.rows)
            shard.rows.append(attempt)
            shard.phase_of_row.append(int(message.fields.get("phase", 1)))
            if final:
                shard.finished_tests.add(attempt.name)
            progress.record_shard(shard.number, attempt, final, earlier_failed)
            self.build.row_finished(junit_name(shard.phase_of_row[-1]), attempt)  # readable while the run goes on
        else:
            shard.build.add(message)

    # -- finishing ------------------------------------------------------------------------------------------
    def finish(self) -> ExitCode:
        """The shards' builds merged into the run's build, then the end every run has (finisher.py)."""
        abort = self.supervisor.abort_reason
        builds = [self._shard_build(shard) for shard in self.shards]
        metadata = merged_metadata(builds, {**self._started_metadata(), "in-cluster": self.metadata})
        merge_into(builds, self.build)
        for shard in self.shards:
            _write_text(self.output.build_dir / own_dir(shard.number) / "pod-log.txt", shard.log)
        finisher = Finisher(self.run, self.console, self.supervisor, self.build)
        finisher.end_on_cluster(self.connection, _facts(builds), self._cleanup)
        return finisher.finish(connection=self.connection, facts=None, metadata=finished_metadata(builds, metadata),
                               result=BuildResult.ABORTED if abort else merged_result(builds))

    def _started_metadata(self) -> dict[str, object]:
        """What the run's started.json said when the Job was made (job, run id, node OS): the merged build keeps it
        whatever the shards sent (a shard that never started sent nothing)."""
        try:
            metadata = read_json_object(self.output.build_dir / STARTED).get("metadata")
        except (OSError, MalformedJson):
            return {}
        return dict(metadata) if isinstance(metadata, dict) else {}

    def _shard_build(self, shard: Shard) -> ShardBuild:
        """The shard's own build when it arrived whole, else one made of the rows it sent, the rest interrupted."""
        abort = self.supervisor.abort_reason
        why = shard.ended.why if shard.ended else "it never ended"
        lost = f"shard {shard.number}/{len(self.shards)} lost: {why}" if why and not abort else ""
        # What stopped the shard where the run knows it: the run itself (its timeout, a signal), or its pod stopped
        # from outside the run (deleted, evicted). What the shard cut off says so, with that class.
        stopped = f"interrupted: {abort}" if abort else lost
        if shard.build.complete:
            build = read_shard_build(ArchiveFiles(shard.build.archive, f"shard {shard.number}/{len(self.shards)}"))
            # A pod lost after its shard had sent a whole build that nothing cut off (deleted or evicted on its
            # way out) took nothing with it: the build's own verdict stands.
            if lost and build.cut_off:
                self._fail(build, lost)
            if stopped:
                for cut in build.phases.values():
                    cut[:] = [_stopped_by(row, stopped, self._cut_by()) for row in cut]
            self._add_unreported(build, shard, stopped)
            return build
        reason = stopped or (
            f"shard {shard.number}/{len(self.shards)} lost: {why or shard.build.problem or 'no build sent'}")
        sent = _rows_with_interrupted(shard, reason, set(self.state.serial), set(self.state.upstream), self._cut_by())
        ref = ShardRef(shard.number, len(self.shards))
        metadata = {"job": self.run.job.name, prow.SHARD_METADATA: str(ref)}
        phases = {junit_name(phase): rows for phase in (1, 2) if (rows := [row for row, p in sent if p == phase])}
        result = BuildResult.ABORTED if abort else BuildResult.FAILURE
        return ShardBuild(ref, {"timestamp": int(self.state.started), "metadata": metadata},
                          {"passed": False, "result": result, "metadata": {**metadata, "error": reason}}, phases)

    def _add_unreported(self, build: ShardBuild, shard: Shard, stopped: str) -> None:
        """A test of the shard's plan that its build has no row for is an interrupted row, never silently missing;
        `stopped`: what stopped the shard, when the run knows."""
        reported = {row.name for row in build.attempts}
        missing = [name for name in shard.tests if name not in reported]
        if not missing:
            return
        reason = stopped or f"shard {shard.number}/{len(self.shards)} did not report it (see its build log)"
        for name in missing:
            phase = junit_name(2 if name in self.state.serial else 1)
            engine = Engine.UPSTREAM if name in self.state.upstream else Engine.NATIVE
            build.phases.setdefault(phase, []).append(_interrupted(name, 1, reason, engine, self._cut_by()))
        self._fail(build, f"{len(missing)} test(s) of its plan without a row")

    def _cut_by(self) -> FailureClass:
        return FailureClass.TIMEOUT if self.supervisor.timed_out else FailureClass.INFRASTRUCTURE

    @staticmethod
    def _fail(build: ShardBuild, why: str) -> None:
        build.finished = dict(build.finished or {}, result=BuildResult.FAILURE, passed=False)
        metadata = build.finished.get("metadata")
        build.finished["metadata"] = {**(metadata if isinstance(metadata, dict) else {}), "error": why}

    def _cleanup(self) -> None:
        api = self.connection.api
        problems = delete(api, self.objects)
        for shard in self.shards:
            shard_run = self.objects.shard_run_id(shard.number)
            try:
                delete_run_namespaces(api, run_id=shard_run)
                # A shard whose pod was killed never withdrew its Lease: left, it would read as an active run (and
                # hold back every later run's clean-up of e2e.test's namespaces) until it expired.
                run_leases.withdraw(api, shard_run)
            except Exception as err:  # listed for `winsuite cleanup`
                problems.append(f"namespaces of shard {shard.number}: {one_line(str(err), 160)}")
        run_leases.withdraw(api, self.run.run_id)
        for problem in problems:
            self.console.say(f"winsuite: warning: not deleted: {problem}; `winsuite cleanup --run-id "
                             f"{self.run.run_id}`", warning=True)
        self.console.say(f"deleted the run's Job, namespace {self.objects.namespace}, service account and binding")


def _facts(builds: list[ShardBuild]) -> ClusterFacts | None:
    """The cluster as the first shard that sent its build discovered it: the nodes whose logs are collected."""
    for build in builds:
        data = build.files.read(f"{ARTIFACTS}/{DISCOVERY_FILE}") if build.files is not None else None
        if data is not None:
            return ClusterFacts.from_json(data.decode())
    return None


def _rows_with_interrupted(shard: Shard, reason: str, serial: set[str], upstream: set[str],
                           cut_by: FailureClass) -> list[tuple[Attempt, int]]:
    """The rows a shard that sent no whole build sent, and an interrupted row for each of its tests without a final
    one; `reason`: what stopped the shard (its own interrupted rows carry it too)."""
    rows = [(_stopped_by(row, reason, cut_by), phase) for row, phase in zip(shard.rows, shard.phase_of_row,
                                                                             strict=True)]
    for name in shard.tests:
        if name not in shard.finished_tests:
            attempt = 1 + sum(r.name == name for r in shard.rows)
            engine = Engine.UPSTREAM if name in upstream else Engine.NATIVE
            rows.append((_interrupted(name, attempt, reason, engine, cut_by), 2 if name in serial else 1))
    return rows


def _stopped_by(row: Attempt, reason: str, cut_by: FailureClass) -> Attempt:
    """A row the shard itself marked interrupted (its signal handler's "SIGTERM received") when the run knows what
    stopped the shard: that reason is its evidence and class, the shard's own message (without the class the shard
    gave it) kept after it."""
    if row.outcome is not Outcome.INTERRUPTED:
        return row
    own = row.message.removeprefix(f"{row.properties.failure_class}: ") if row.properties.failure_class else row.message
    properties = dataclasses.replace(row.properties, failure_class=cut_by, failure_evidence=reason)
    return dataclasses.replace(row, message=f"{cut_by}: {reason} ({own})", properties=properties)


def _interrupted(name: str, attempt: int, reason: str, engine: Engine, cut_by: FailureClass) -> Attempt:
    """A test a shard did not finish: cut off by the run timeout (timeout) or by its pod or a signal stopping it
    (infrastructure), the reason its evidence."""
    return Attempt(name, "", Outcome.INTERRUPTED, attempt=attempt, message=f"{cut_by}: {reason}",
                   properties=RowProperties(engine=engine, interrupted=True, failure_class=cut_by,
                                            failure_evidence=reason))


def _write_text(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")

