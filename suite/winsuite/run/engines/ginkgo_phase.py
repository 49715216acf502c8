"""One ginkgo run of the upstream engine: selected e2e.test specs, run by the ginkgo CLI, reported as winsuite rows.

ginkgo is focused on the exact full names (quoted, anchored), so it runs what winsuite selected and nothing else.
Progress is live: ginkgo's verbose output names every spec as it ends (e2e.test's --progress-report-url posts
only suite totals). The rows come from ginkgo's JSON report, written also when the suite is interrupted; a ginkgo
that had to be killed leaves the specs its output reported as done, and the others marked interrupted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import queue
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO
from typing import Any
from typing import TextIO

from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.results.prow import diagnostics_dir_name
from winsuite.run.engines.base import PhaseSpec
from winsuite.run.engines.ginkgo_report import UPSTREAM
from winsuite.run.engines.ginkgo_report import ReportError
from winsuite.run.engines.ginkgo_report import attempts_of
from winsuite.run.engines.ginkgo_report import captured_output
from winsuite.run.engines.ginkgo_report import never_started
from winsuite.run.engines.ginkgo_report import spec_name
from winsuite.run.engines.ginkgo_report import spec_reports
from winsuite.run.engines.ginkgo_report import suite_setup_failure
from winsuite.run.engines.spec_timeout import Overdue
from winsuite.run.engines.spec_timeout import ProgressReports
from winsuite.run.engines.spec_timeout import e2e_process
from winsuite.run.engines.tether import tethered
from winsuite.run.engines.upstream_toolchain import Toolchain
from winsuite_reports.conventions import SUITE_NAME

# Linux limits one command-line argument to 128 KiB: a longer focus is split over several ginkgo runs.
MAX_FOCUS_CHARS = 100_000
NODEID = "upstream"


@dataclasses.dataclass(frozen=True)
class UpstreamSettings:
    """What a run gives e2e.test besides the specs (the run's job, cluster and repo list)."""

    kubeconfig: Path | None  # None: in-cluster
    context: str | None
    node_os: str
    repo_list: str | None  # KUBE_TEST_REPO_LIST: the run's repo list, as a file of the build
    non_blocking_taints: tuple[str, ...]
    flake_attempts: int
    # ginkgo has no per-spec timeout flag (specs carry their own): a spec running longer than this gets
    # ginkgo's progress report (where it is stuck) in the build log, and is interrupted (spec_timeout.py).
    test_timeout: float
    kubectl: str | None = None


def focus_chunks(names: list[str]) -> list[str]:
    """ginkgo focus regexes matching exactly these full names, each short enough for one argument."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for name in names:
        alternative = re.escape(name)
        if current and size + len(alternative) + 1 > MAX_FOCUS_CHARS:
            chunks.append(_anchored(current))
            current, size = [], 0
        current.append(alternative)
        size += len(alternative) + 1
    if current:
        chunks.append(_anchored(current))
    return chunks


def _anchored(alternatives: list[str]) -> str:
    # ginkgo matches "<suite description> <spec text>".
    return f"^{re.escape(SUITE_NAME)} (?:{'|'.join(alternatives)})$"


class OutputReader:
    """Reads ginkgo's verbose output as it streams: copies it to the build log, notes every spec that ends.

    ginkgo prints a finished spec as a header line (`• [2.1 seconds]`, `• [FAILED] [9.8 seconds]`, `S [SKIPPED] …`)
    and then its full name, followed by its labels in brackets; with one process, verbose output names the spec
    when it starts, and the header that ends it is followed by a separator instead. A progress report naming a
    spec not yet done makes it overdue.
    """

    _HEADER = re.compile(r"^([•SP]) (?:\[([A-Z][A-Z0-9 -]*)\] )?\[([\d.]+) seconds?\]$")
    _OUTCOMES = {"": Outcome.PASSED, "SKIPPED": Outcome.SKIPPED, "PENDING": Outcome.SKIPPED,
                 "INTERRUPTED": Outcome.INTERRUPTED}

    def __init__(self, stream: IO[bytes], log: TextIO, names: set[str]) -> None:
        self.finished: queue.Queue[tuple[str, Outcome, float]] = queue.Queue()
        self.overdue: queue.Queue[Overdue] = queue.Queue()
        self.names = names
        self.progress = ProgressReports(self._name)
        self.done: set[str] = set()  # a done spec's output repeats its progress reports: not overdue then
        self.thread = threading.Thread(target=self._read, args=(stream, log), name="winsuite-ginkgo", daemon=True)
        self.thread.start()

    def _read(self, stream: IO[bytes], log: TextIO) -> None:
        pending: str | None = None  # the state of a header whose name line comes next
        started: str | None = None  # the spec whose name opened its output (one process: -v names it first)
        seconds = 0.0
        for raw in stream:
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            log.write(line + "\n")
            if pending is not None:
                name = self._name(line) or started  # with --procs=1 the header follows the spec's own output
                if name is not None:
                    self.done.add(name)
                    self.finished.put((name, self._OUTCOMES.get(pending, Outcome.FAILED), seconds))
                pending = started = None
                continue
            overdue = self.progress.read(line)
            if overdue is not None and overdue.name not in self.done:
                self.overdue.put(overdue)
            started = self._name(line) or started
            header = self._HEADER.match(line)
            if header:
                pending = header.group(2) or ("SKIPPED" if header.group(1) == "S" else "")
                seconds = float(header.group(3))
                if pending.startswith("FLAKEY"):
                    pending = ""
        log.flush()

    def _name(self, line: str) -> str | None:
        """The selected spec a name line is about (labels follow the name in brackets)."""
        if line in self.names:
            return line
        head, bracket, _ = line.rpartition(" [")
        return head if bracket and head in self.names else None

    def join(self, timeout: float) -> None:
        self.thread.join(timeout)


class UpstreamPhase:
    """The upstream half of one phase: ginkgo runs (one per focus chunk), one after the other."""

    def __init__(self, spec: PhaseSpec, names: list[str], toolchain: Toolchain, settings: UpstreamSettings,
                 artifacts: Path, log: TextIO, deadline: float) -> None:
        self.spec = spec
        self.names = names
        self.toolchain = toolchain
        self.settings = settings
        self.artifacts = artifacts
        self.log = log
        self.deadline = deadline  # the run's end (time.time()), from its run timeout
        self.work = artifacts / f"upstream_{spec.number:02d}"
        self.output: OutputReader | None = None
        self.chunks = focus_chunks(names)
        self.reports: list[Path] = []
        self.process: subprocess.Popen[bytes] | None = None
        self.interrupted_with: str | None = None
        self.reported: dict[str, Outcome] = {}  # what ginkgo's output said was done
        self.cut: set[str] = set()  # specs interrupted by the per-test timeout
        self.cut_since_rerun = False  # the specs a cut process skipped are to run again

    # -- running ------------------------------------------------------------------------------------------
    def argv(self, chunk: int) -> list[str]:
        """ginkgo's command line for one focus chunk; its suite timeout is what is left of the run's."""
        s = self.settings
        remaining = max(self.deadline - time.time(), 60)
        ginkgo = [str(self.toolchain.ginkgo), f"--procs={self.spec.workers}", "--no-color", "-v", "--silence-skips",
                  f"--timeout={int(remaining)}s", f"--json-report={self._report(chunk).name}",
                  f"--output-dir={self.work}", f"--focus={self.chunks[chunk]}"]
        if s.flake_attempts > 1:
            ginkgo.append(f"--flake-attempts={s.flake_attempts}")
        ginkgo.append(f"--poll-progress-after={int(s.test_timeout)}s")
        e2e = ["--provider=skeleton", f"--node-os-distro={s.node_os}"]
        if s.kubeconfig is not None:
            e2e.append(f"--kubeconfig={s.kubeconfig}")
        if s.context:
            e2e.append(f"--context={s.context}")
        if s.non_blocking_taints:
            e2e.append(f"--non-blocking-taints={','.join(s.non_blocking_taints)}")
        if s.kubectl:
            e2e.append(f"--kubectl-path={s.kubectl}")
        return [*ginkgo, str(self.toolchain.e2e_test), "--", *e2e]

    def _report(self, chunk: int) -> Path:
        return self.work / f"ginkgo_{chunk:02d}.json"

    def start(self, chunk: int = 0) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        argv = self.argv(chunk)
        self.reports.append(self._report(chunk))
        self.log.write(f"$ {' '.join(argv[:8])} … ({len(self.names)} spec(s), chunk {chunk + 1}/{len(self.chunks)})\n")
        self.log.flush()
        env = dict(os.environ)
        if self.settings.repo_list is not None:
            env["KUBE_TEST_REPO_LIST"] = self.settings.repo_list
        # Its own session: a Ctrl-C on the terminal reaches the runner, which decides what ginkgo gets; tethered:
        # ginkgo and its e2e.test processes end with the runner, even a killed one.
        self.process = subprocess.Popen(tethered(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True, env=env)
        assert self.process.stdout is not None
        self.output = OutputReader(self.process.stdout, self.log, set(self.names))

    def wait(self, timeout: float) -> int | None:
        """The exit code once the last chunk is done; the next chunk is started when one ends."""
        assert self.process is not None and self.output is not None
        self._cut_overdue()
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        self.output.join(timeout=10)  # the rest of its output
        chunk = len(self.reports)
        if chunk == len(self.chunks) and self.cut_since_rerun and self.interrupted_with is None:
            self.cut_since_rerun = False
            self.chunks += focus_chunks([name for name in self.names if name not in self._started()])
        if chunk < len(self.chunks) and self.interrupted_with is None:
            self.start(chunk)
            return None
        return code

    def _cut_overdue(self) -> None:
        """SIGINT to the e2e.test process of each spec past the per-test timeout: ginkgo interrupts that spec,
        runs its cleanup, and skips the specs that process would have run next."""
        assert self.process is not None and self.output is not None
        while not self.output.overdue.empty():
            overdue = self.output.overdue.get_nowait()
            if self.interrupted_with is not None:  # the run is stopping: its specs end interrupted, not timed out
                continue
            done = overdue.name in self.cut or overdue.name in self.output.done
            pid = None if done else e2e_process(self.process.pid, overdue.process)
            if pid is None:
                continue
            self.cut.add(overdue.name)
            self.cut_since_rerun = True
            self.log.write(f"winsuite: {overdue.name} ran past the per-test timeout of "
                           f"{self.settings.test_timeout:.0f}s; interrupting it (e2e.test pid {pid})\n")
            self.log.flush()
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGINT)

    def _started(self) -> set[str]:
        """The specs some ginkgo run of this phase started (whatever their outcome)."""
        started = set()
        for path in self.reports:
            with contextlib.suppress(ReportError):
                started |= {spec_name(r) for r in spec_reports(path) if not never_started(r)}
        return started

    def interrupt(self, reason: str) -> None:
        """SIGINT to ginkgo: its processes run their cleanup (namespaces included) and write the report."""
        if self.process is None or self.process.poll() is not None or self.interrupted_with is not None:
            return
        self.interrupted_with = reason
        self._signal(signal.SIGINT)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def _signal(self, signum: int) -> None:
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signum)

    def new_attempts(self) -> Iterator[tuple[Attempt, bool]]:
        """Specs ginkgo reported done since the last call (for the progress line)."""
        while self.output is not None:
            try:
                name, outcome, seconds = self.output.finished.get_nowait()
            except queue.Empty:
                return
            self.reported[name] = outcome
            yield Attempt(name, NODEID, outcome, duration=seconds, properties=UPSTREAM), True

    # -- results --------------------------------------------------------------------------------------------
    def close(self) -> list[Attempt]:
        """Every selected spec's rows, from ginkgo's reports, with diagnostics of the failed ones."""
        list(self.new_attempts())
        wanted = set(self.names)
        rows: dict[str, list[Attempt]] = {}
        problems: list[str] = []
        for path in self.reports:
            if not path.exists():
                problems.append(f"{path.name} was not written")
                continue
            try:
                setup = suite_setup_failure(path)
                if setup:  # no spec ran: each is a failure of the suite's setup, not a skip
                    return [Attempt(name, NODEID, Outcome.FAILED, message=setup, details=setup, properties=UPSTREAM,
                                    failed_during="BeforeSuite") for name in self.names]
                for report in spec_reports(path):
                    name = spec_name(report)
                    if name in wanted and name not in rows and not never_started(report):
                        rows[name] = self._with_diagnostics(attempts_of(report, NODEID), report)
            except ReportError as err:
                problems.append(str(err))
        for name in self.cut & set(rows):
            rows[name][-1] = self._timed_out(rows[name][-1])
        for name in self.names:
            if name in rows:
                continue
            if name in self.reported:  # done, but its details are lost with a killed ginkgo
                rows[name] = [Attempt(name, NODEID, self.reported[name], message=(
                    "" if self.reported[name] is Outcome.PASSED else "failed; details lost: " + "; ".join(problems)),
                    properties=UPSTREAM)]
            elif problems or self.interrupted_with:
                reason = self.interrupted_with or "; ".join(problems)
                rows[name] = [Attempt(name, NODEID, Outcome.INTERRUPTED, message=f"interrupted: {reason}",
                                      properties=dataclasses.replace(UPSTREAM, interrupted=True))]
        return [attempt for name in self.names for attempt in rows.get(name, [])]

    def _timed_out(self, attempt: Attempt) -> Attempt:
        """A spec the per-test timeout interrupted fails as a native test cut off does (one that ended by itself
        meanwhile keeps its own outcome)."""
        if attempt.outcome is not Outcome.INTERRUPTED:
            return attempt
        return dataclasses.replace(
            attempt, outcome=Outcome.FAILED, message=f"timed out after {self.settings.test_timeout:.0f}s "
            "(per-test timeout)", properties=dataclasses.replace(attempt.properties, interrupted=False,
                                                                 timed_out=True))

    def _with_diagnostics(self, attempts: list[Attempt], report: dict[str, Any]) -> list[Attempt]:
        """A failed spec's own log (e2e.test dumps its namespace's events and pods there) under artifacts/."""
        last = attempts[-1]
        if last.outcome not in (Outcome.FAILED, Outcome.INTERRUPTED):
            return attempts
        output = captured_output(report)
        if not output:
            return attempts
        directory = self.artifacts / diagnostics_dir_name(last.name, last.attempt)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "e2e.log").write_text(f"{last.details}\n\n{output}", encoding="utf-8")
        link = f"{os.path.relpath(directory, self.artifacts.parent)}/"
        return [*attempts[:-1], dataclasses.replace(
            last, properties=dataclasses.replace(last.properties, diagnostics=link))]
