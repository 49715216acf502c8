"""Every verdict carries its evidence on the dashboard: a failed cell's class and evidence, where every cell ran,
failures per class per build, the pass rate without infrastructure failures beside the raw one, a verdict that names
infrastructure failures apart, and a test that passed only on a retry FLAKY in every figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from winsuite_reports.analysis import Report
from winsuite_reports.analysis import ReportOptions
from winsuite_reports.analysis import build_report
from winsuite_reports.conventions import FailureClass
from winsuite_reports.conventions import RowProperties
from winsuite_reports.failure_counts import per_build
from winsuite_reports.grid import RUN_WIDTH
from winsuite_reports.grid import grid_data
from winsuite_reports.markdown import markdown_summary
from winsuite_reports.model import Status
from winsuite_reports.placement import CODE_ALPHABET
from winsuite_reports.placement import Placement
from winsuite_reports.readiness import RowState
from winsuite_reports.results import load_history
from winsuite_reports.status import TabStatus
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_job

NOW = START + 86400
PULL, ASSERT, UNCLASSIFIED, RETRIED, GREEN = ("[sig-windows] pulls an image", "[sig-node] asserts",
                                              "[sig-node] upstream spec", "[sig-node] retried", "[sig-node] green")
WIN, LINUX = "win-0 (windows, 10.0.20348, runtime containerd://1.7.24)", "linux-0 (linux, runtime containerd://1.7.24)"
PULL_EVIDENCE = "Failed: ErrImagePull on pod e2e-pods-1a2b/agnhost (event at 2026-01-01T00:00:00Z)"


def classed(failure_class: FailureClass, evidence: str, ran_on: str) -> dict[str, str]:
    return RowProperties(failure_class=failure_class, failure_evidence=evidence, ran_on=ran_on).to_junit(attempt=1)


def report(tmp_path: Path) -> Report:
    """Newest build first: the image pull fails on infrastructure twice, an assertion once, an upstream spec with no
    class once; one test passed only on its retry in the newest build."""
    write_job(tmp_path, "ci-windows", {
        PULL: "FFPP", ASSERT: "FPPP", UNCLASSIFIED: "PFPP", RETRIED: "KPPP", GREEN: "PPPP",
    }, metadata={"release-blocking": True}, properties={
        PULL: classed(FailureClass.INFRASTRUCTURE, PULL_EVIDENCE, WIN),
        ASSERT: classed(FailureClass.TEST, "", WIN),
        RETRIED: classed(FailureClass.TIMEOUT, "the per-test timeout (5m0s) cut it off", f"{WIN}, {LINUX}"),
        GREEN: {"ran-on": LINUX},
    })
    return build_report(load_history(tmp_path, now=NOW), ReportOptions(), now=NOW)


def test_a_failed_cell_keeps_its_class_and_evidence(tmp_path: Path) -> None:
    job = report(tmp_path).tabs[0].job
    pull = job.cells(PULL)[0]
    assert (pull.status, pull.failure_class, pull.evidence) == (Status.FAIL, "infrastructure", PULL_EVIDENCE)
    retried = job.cells(RETRIED)[0]  # a flaky cell speaks with its failed attempt
    assert (retried.status, retried.failure_class) == (Status.FLAKY, "timeout")
    assert job.cells(UNCLASSIFIED)[1].failure_class == ""


def ran_on(placement: Placement, column: int, row: str, data: dict[str, Any]) -> str:
    """What the page's script shows as a cell's nodes (reports/winsuite_reports/templates/_grid.js ranOn)."""
    build = data["builds"][column]
    strings = data["strings"]
    width, codes, row_id = build["pw"], build["p"], placement.ids.get(row, -1)
    code = codes[row_id * width: row_id * width + width] if row_id >= 0 else ""
    if not code.strip():
        return ""
    index = 0
    for char in code:
        index = index * len(CODE_ALPHABET) + CODE_ALPHABET.index(char)
    return str(strings[build["o"][index]])


def test_the_grid_gives_each_failed_cell_its_class_and_every_cell_its_nodes(tmp_path: Path) -> None:
    job = report(tmp_path).tabs[0].job
    data: dict[str, Any] = grid_data(job, lambda build: build.id, 50)
    strings = data["strings"]
    rows = {row[0]: row for row in data["rows"]}
    icon, failure_class, evidence = (strings[i] for i in rows[PULL][5][4:RUN_WIDTH])
    assert (icon, failure_class, evidence) == ("I", "infrastructure", PULL_EVIDENCE)
    assert strings[rows[ASSERT][5][4]] == "F"  # a test's own failure keeps TestGrid's F
    assert job.placement is not None
    assert ran_on(job.placement, 0, GREEN, data) == LINUX
    assert ran_on(job.placement, 3, RETRIED, data) == f"{WIN}, {LINUX}"
    assert ran_on(job.placement, 0, UNCLASSIFIED, data) == ""  # its results do not say
    builds = data["builds"]
    assert [strings[build["ft"]] for build in builds] == [
        "infrastructure 1 · test 1 · flaky 1", "infrastructure 1 · unclassified 1", "", ""]
    assert [strings[build["f"]] for build in builds] == ["1I 1F", "1I 1?", "", ""]


def test_placement_codes_widen_past_the_alphabet() -> None:
    placement = Placement()
    many = {f"row {i}": f"node-{i}" for i in range(len(CODE_ALPHABET) + 5)}
    (column,) = placement.add_builds([many])
    assert column.width == 2 and len(column.codes) == 2 * len(many)
    decoded = {}
    for row, row_id in placement.ids.items():
        code = column.codes[2 * row_id: 2 * row_id + 2]
        decoded[row] = column.node_sets[CODE_ALPHABET.index(code[0]) * len(CODE_ALPHABET)
                                        + CODE_ALPHABET.index(code[1])]
    assert decoded == many


def test_failures_per_class_per_build_and_the_pass_rate_without_infrastructure(tmp_path: Path) -> None:
    tab = report(tmp_path).tabs[0]
    counts = per_build(tab.job)
    newest, older = tab.job.builds[0].id, tab.job.builds[1].id
    assert counts[newest].classes == (("infrastructure", 1), ("test", 1)) and counts[newest].flaky == 1
    assert counts[older].classes == (("infrastructure", 1), ("unclassified", 1))
    figures = tab.failures
    # 20 cells ran; 15 passed, 4 failed (2 of them the image pull's infrastructure failures), 1 flaky
    assert (figures.ran, figures.passed, figures.infra) == (20, 15, 2)
    assert figures.pass_rate == 15 / 20 and figures.pass_rate_without_infra == 15 / 18
    assert figures.counts.label() == "infrastructure 2 · test 1 · unclassified 1 · flaky 1"
    assert figures.as_json() == {
        "columns": 4, "cells": {"passed": 15, "ran": 20, "infrastructure": 2}, "pass_rate": 0.75,
        "pass_rate_without_infrastructure": 0.8333, "failures_by_class": {"infrastructure": 2, "test": 1,
                                                                          "unclassified": 1}, "flaky": 1,
        "cross_checks": {"agree": 0, "disagree": 0, "not_compared": 0}}


def test_the_verdict_names_infrastructure_failures_apart(tmp_path: Path) -> None:
    readiness = report(tmp_path).readiness
    assert not readiness.ready
    assert f"1 applicable test FAILING on infrastructure (not the product): {PULL}" in readiness.reasons
    assert f"1 applicable test FAILING on a product or test failure: {ASSERT}" in readiness.reasons
    pull = next(test for test in readiness.tests if test.row == PULL)
    assert pull.infra and pull.detail.endswith(f"newest failure: infrastructure ({PULL_EVIDENCE})")


def test_a_test_that_passed_only_on_a_retry_is_flaky_in_every_figure(tmp_path: Path) -> None:
    result = report(tmp_path)
    tab = result.tabs[0]
    assert tab.job.cells(RETRIED)[0].status is Status.FLAKY  # the grid's cell
    assert per_build(tab.job)[tab.job.builds[0].id].flaky == 1  # the column's failure counts
    assert tab.failures.counts.flaky == 1 and tab.failures.passed == 15  # not a pass
    assert next(test for test in result.readiness.tests if test.row == RETRIED).state is RowState.FLAKY  # the verdict
    assert any(test.row == RETRIED for test in tab.flakiness.flaky_tests)  # the flakiness page
    assert tab.summary.latest_green != tab.job.builds[0].id and tab.summary.status is not TabStatus.PASSING
    assert f"2 applicable tests FLAKY: {RETRIED}, {UNCLASSIFIED}" in result.readiness.reasons
    assert "flaky 1" in markdown_summary(result)
