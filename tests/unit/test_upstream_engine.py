"""The upstream engine's pure parts: ginkgo's JSON report as rows, its streamed output, the exact-name focus."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from winsuite.policy.selection import Selector
from winsuite.results.model import Outcome
from winsuite.run.engines.base import PhaseSpec
from winsuite.run.engines.ginkgo_phase import MAX_FOCUS_CHARS
from winsuite.run.engines.ginkgo_phase import OutputReader
from winsuite.run.engines.ginkgo_phase import UpstreamPhase
from winsuite.run.engines.ginkgo_phase import UpstreamSettings
from winsuite.run.engines.ginkgo_phase import focus_chunks
from winsuite.run.engines.ginkgo_report import ReportError
from winsuite.run.engines.ginkgo_report import attempts_of
from winsuite.run.engines.ginkgo_report import never_started
from winsuite.run.engines.ginkgo_report import spec_reports
from winsuite.run.engines.spec_timeout import Overdue
from winsuite.run.engines.spec_timeout import e2e_process
from winsuite.run.engines.tether import WATCHER_NAME
from winsuite.run.engines.upstream_toolchain import Toolchain

NAME = "[sig-node] Pods should get a host IP [NodeConformance] [Conformance]"


def spec(state: str, *, attempts: int = 1, message: str = "", additional: list[dict[str, Any]] | None = None
         ) -> dict[str, Any]:
    return {"ContainerHierarchyTexts": ["[sig-node] Pods"], "LeafNodeText": "should get a host IP [NodeConformance] "
            "[Conformance]", "LeafNodeType": "It", "State": state, "RunTime": 2_500_000_000, "NumAttempts": attempts,
            "Failure": {"Message": message, "Location": {"FileName": "pods.go", "LineNumber": 205}} if message else {},
            "AdditionalFailures": additional or []}


def test_a_passed_spec_is_one_row_with_its_duration() -> None:
    (row,) = attempts_of(spec("passed"), "upstream")
    assert (row.name, row.outcome, row.duration, row.properties.engine) == (NAME, Outcome.PASSED, 2.5, "upstream")


def test_a_flaky_spec_keeps_every_failed_attempt_before_its_pass() -> None:
    first = {"State": "failed", "Failure": {"Message": "timed out waiting for the pod\nmore"}}
    rows = attempts_of(spec("passed", attempts=2, additional=[first]), "upstream")
    assert [(r.attempt, r.outcome) for r in rows] == [(1, Outcome.FAILED), (2, Outcome.PASSED)]
    assert rows[0].message == "timed out waiting for the pod"


def test_failures_timeouts_interrupts_and_skips_say_what_ginkgo_said() -> None:
    (failed,) = attempts_of(spec("timedout", message="A suite timeout occurred"), "upstream")
    assert failed.outcome is Outcome.FAILED and failed.properties.timed_out
    assert failed.details.endswith("at pods.go:205")
    (interrupted,) = attempts_of(spec("interrupted", message="interrupted by user"), "upstream")
    assert interrupted.outcome is Outcome.INTERRUPTED and interrupted.properties.interrupted
    (skipped,) = attempts_of(spec("skipped", message="Only supported for providers [gce]"), "upstream")
    assert (skipped.outcome, skipped.message) == (Outcome.SKIPPED, "Only supported for providers [gce]")
    assert never_started(spec("skipped", message="Spec skipped because an interrupt was detected"))
    assert not never_started(spec("skipped", message="Only supported for providers [gce]"))
    assert never_started(spec("skipped"))  # the process that drew it was interrupted: ginkgo says nothing
    with pytest.raises(ReportError, match="unknown ginkgo state 'exploded'"):
        attempts_of(spec("exploded"), "upstream")


def test_a_report_that_is_not_ginkgos_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"not": "a list"}))
    with pytest.raises(ReportError, match="not a ginkgo JSON report"):
        list(spec_reports(path))
    path.write_text('[{"SpecReports": [')
    with pytest.raises(ReportError, match="cannot read ginkgo's report"):
        list(spec_reports(path))


def test_the_streamed_output_names_each_spec_as_it_ends() -> None:
    names = {NAME, "[sig-node] Secrets should patch a secret [Conformance]", "[sig-x] one label [sig-x]"}
    output = "\n".join([
        "------------------------------",
        "• [2.148 seconds]",
        f"{NAME} [sig-node, NodeConformance, Conformance]",
        "pods.go:205",
        "------------------------------",
        "• [FAILED] [4.100 seconds]",
        "[sig-node] Secrets should patch a secret [Conformance] [sig-node, Conformance]",
        "• [FLAKEY TEST - TOOK 2 ATTEMPTS TO PASS] [9.000 seconds]",
        "[sig-x] one label [sig-x] [sig-x]",
        "S [SKIPPED] [0.001 seconds]",
        "[sig-storage] not selected [sig-storage]",
    ]) + "\n"
    log = io.StringIO()
    reader = OutputReader(io.BytesIO(output.encode()), log, names)
    reader.join(10)
    seen = []
    while not reader.finished.empty():
        seen.append(reader.finished.get())
    assert seen == [(NAME, Outcome.PASSED, 2.148),
                    ("[sig-node] Secrets should patch a secret [Conformance]", Outcome.FAILED, 4.1),
                    ("[sig-x] one label [sig-x]", Outcome.PASSED, 9.0)]
    assert log.getvalue() == output


def test_the_focus_selects_exactly_the_names_and_is_split_to_fit_an_argument() -> None:
    names = [NAME, "[sig-node] Pods should get a host IP", "[sig-x] (parens) + dots. [Tag]"]
    (focus,) = focus_chunks(names)
    selector = Selector(focus=[focus])
    assert selector.filter([*names, NAME + " [Extra]", "prefix " + NAME]) == names
    many = [f"[sig-x] spec number {i} " + "x" * 200 for i in range(2000)]
    chunks = focus_chunks(many)
    assert len(chunks) > 1 and all(len(c) <= MAX_FOCUS_CHARS + 100 for c in chunks)
    assert sum(len(Selector(focus=[c]).filter(many)) for c in chunks) == len(many)


def test_with_one_process_the_spec_is_named_when_it_starts() -> None:
    """ginkgo --procs=1 -v names a spec before its steps; the header that ends it is followed by a separator."""
    output = "\n".join([
        "------------------------------",
        f"{NAME} [sig-node, NodeConformance, Conformance]",
        "k8s.io/kubernetes@v1.36.3/test/e2e/common/node/pods.go:205",
        '  STEP: Creating a kubernetes client @ 11/25/26 12:45:12.1',
        "• [4.104 seconds]",
        "------------------------------",
        "[SynchronizedAfterSuite] ",
        "S [SKIPPED] [0.001 seconds]",
        "------------------------------",
    ]) + "\n"
    reader = OutputReader(io.BytesIO(output.encode()), io.StringIO(), {NAME})
    reader.join(10)
    seen = []
    while not reader.finished.empty():
        seen.append(reader.finished.get())
    assert seen == [(NAME, Outcome.PASSED, 4.104)]


PROBE = '[sig-node] Probing container should *not* be restarted with a exec "cat /tmp/health" liveness probe'


def overdue_of(output: str, names: set[str]) -> list[Overdue]:
    reader = OutputReader(io.BytesIO(output.encode()), io.StringIO(), names)
    reader.join(10)
    return [reader.overdue.get() for _ in range(reader.overdue.qsize())]


def test_a_progress_report_makes_a_running_spec_overdue_with_its_process() -> None:
    """ginkgo's progress report at --poll-progress-after (the per-test timeout) names the spec and, in parallel,
    its process; the same report repeated in a done spec's timeline does not."""
    report = [
        "  ------------------------------",
        "  Progress Report for Ginkgo Process #2",
        "  Automatically polling progress:",
        f"    {PROBE} [NodeConformance] [Conformance] (Spec Runtime: 30.002s)",
        "      k8s.io/kubernetes@v1.36.3/test/e2e/common/node/container_probe.go:151",
        "      In [It] (Node Runtime: 30s)",
    ]
    timeline = ["• [FAILED] [12.000 seconds]", f"{NAME} [sig-node, NodeConformance, Conformance]",
                f"    {NAME} (Spec Runtime: 11.9s)"]
    names = {NAME, f"{PROBE} [NodeConformance] [Conformance]"}
    assert overdue_of("\n".join([*report, *timeline]) + "\n", names) == [
        Overdue(f"{PROBE} [NodeConformance] [Conformance]", 2)]
    one_process = ["Automatically polling progress:", f"  {NAME} (Spec Runtime: 30s)"]
    assert overdue_of("\n".join(one_process) + "\n", names) == [Overdue(NAME, None)]


def test_the_progress_report_of_an_interrupt_makes_no_spec_overdue() -> None:
    """On SIGINT (the run stopping) ginkgo prints where each spec is: those specs end interrupted, not timed out."""
    interrupt = ["  Interrupted by User",
                 "  First interrupt received; Ginkgo will run any cleanup and reporting nodes but will skip all "
                 "remaining specs.  Interrupt again to skip cleanup.",
                 "  Here's a current progress report:",
                 f"    {PROBE} [NodeConformance] [Conformance] (Spec Runtime: 5.3s)",
                 "      k8s.io/kubernetes@v1.36.3/test/e2e/common/node/container_probe.go:151"]
    assert overdue_of("\n".join(interrupt) + "\n", {NAME, f"{PROBE} [NodeConformance] [Conformance]"}) == []


def test_the_overdue_specs_process_is_the_e2e_test_child_of_ginkgo_with_its_number(tmp_path: Path) -> None:
    def process(pid: int, parent: int, *argv: str, name: str = "e2e.test") -> None:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(f"{pid} ({name}) S {parent} {pid} 0 0\n")
        (tmp_path / str(pid) / "cmdline").write_bytes("\0".join(argv).encode() + b"\0")
    process(10, 1, "ginkgo", "--procs=2")
    process(11, 10, "e2e.test", "--ginkgo.parallel.process=1", "--ginkgo.parallel.total=2")
    process(12, 10, "e2e.test", "--ginkgo.parallel.process=2", "--ginkgo.parallel.total=2")
    process(13, 99, "e2e.test", "--ginkgo.parallel.process=2")  # another ginkgo's
    process(14, 99, "python", "-m", "winsuite.run.engines.tether", name=WATCHER_NAME)  # its run's tether
    (tmp_path / "self").mkdir()
    assert e2e_process(10, 2, tmp_path) == 12 and e2e_process(10, 1, tmp_path) == 11
    assert e2e_process(10, 3, tmp_path) is None and e2e_process(10, None, tmp_path) is None  # two: unknown
    assert e2e_process(99, None, tmp_path) == 13  # one process: its only child


def test_a_spec_cut_by_the_per_test_timeout_fails_timed_out_and_the_specs_never_started_get_no_row(
        tmp_path: Path) -> None:
    other = "[sig-node] Secrets should patch a secret [Conformance]"
    cut = dict(spec("interrupted", message="Interrupted by User"), LeafNodeText="should cut")
    never = dict(spec("skipped"), ContainerHierarchyTexts=["[sig-node] Secrets"],
                 LeafNodeText="should patch a secret [Conformance]")
    settings = UpstreamSettings(kubeconfig=None, context=None, node_os="linux", repo_list=None,
                                non_blocking_taints=(), flake_attempts=1, test_timeout=30)
    phase = UpstreamPhase(PhaseSpec(1, "parallel", 2), ["[sig-node] Pods should cut", other],
                          Toolchain(Path("e2e.test"), Path("ginkgo"), "v1.36.3", "v2.28.1"), settings, tmp_path,
                          io.StringIO(), deadline=0)
    phase.work.mkdir()
    report = phase.work / "ginkgo_00.json"
    report.write_text(json.dumps([{"SpecReports": [cut, never]}]))
    phase.reports.append(report)
    phase.cut.add("[sig-node] Pods should cut")
    assert phase._started() == {"[sig-node] Pods should cut"}
    (row,) = phase.close()
    assert (row.outcome, row.message) == (Outcome.FAILED, "timed out after 30s (per-test timeout)")
    assert row.properties.timed_out and not row.properties.interrupted
