"""The upstream engine's pure parts: ginkgo's JSON report as rows, its streamed output, the exact-name focus."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from winsuite.policy.selection import Selector
from winsuite.results.model import Outcome
from winsuite.run.engines.ginkgo_phase import MAX_FOCUS_CHARS
from winsuite.run.engines.ginkgo_phase import OutputReader
from winsuite.run.engines.ginkgo_phase import focus_chunks
from winsuite.run.engines.ginkgo_report import ReportError
from winsuite.run.engines.ginkgo_report import attempts_of
from winsuite.run.engines.ginkgo_report import never_started
from winsuite.run.engines.ginkgo_report import spec_reports

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
