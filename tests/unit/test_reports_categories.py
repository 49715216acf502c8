"""The category view: rows grouped by category and operational-readiness test case, with verdicts per build."""

from __future__ import annotations

from pathlib import Path

import pytest
from markupsafe import escape

from winsuite_reports import render
from winsuite_reports.analysis import ReportOptions
from winsuite_reports.analysis import build_report
from winsuite_reports.categories import UNCATEGORIZED
from winsuite_reports.categories import categories
from winsuite_reports.job import Job
from winsuite_reports.model import Status
from winsuite_reports.render import write_dashboard
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_job

HOST_IP = "[sig-node] Pods should get a host IP"
LOGS = "[sig-node] Pods should support retrieving logs"
NODE_PORT = "[sig-windows] Services should be able to create a functioning NodePort service for Windows"
LONELY = "[sig-apps] Job should run a job to completion"


def job(tmp_path: Path) -> Job:
    properties = {
        HOST_IP: {"category": "Core.Pods", "ops-readiness-case": "Ability to schedule a pod"},
        LOGS: {"category": "Core.Pods", "ops-readiness-case": "Ability to schedule a pod"},
        NODE_PORT: {"category": "Core.Network"},
    }
    rows = {HOST_IP: "PPF", LOGS: "FPP", NODE_PORT: "SSS", LONELY: "PKP"}
    write_job(tmp_path, "job", rows, properties=properties)
    (loaded,) = load_history(tmp_path, now=START).jobs
    return loaded


def test_rows_group_by_category_then_case(tmp_path: Path) -> None:
    found = categories(job(tmp_path))
    assert [c.name for c in found] == [UNCATEGORIZED, "Core.Network", "Core.Pods"]
    pods = found[2]
    (case,) = pods.cases
    assert case.name == "Ability to schedule a pod" and sorted(case.tests) == [HOST_IP, LOGS]
    # Newest first: LOGS failed in the newest build, HOST_IP in the oldest; the case fails in both.
    assert case.history == [Status.FAIL, Status.PASS, Status.FAIL]
    assert case.latest is Status.FAIL and case.pass_rate == 1 / 3


def test_skipped_and_flaky_cases_are_told_apart(tmp_path: Path) -> None:
    found = {c.name: c for c in categories(job(tmp_path))}
    (network,) = found["Core.Network"].cases
    assert network.history == [Status.SKIP] * 3 and network.pass_rate is None
    (lonely,) = found[UNCATEGORIZED].cases
    assert lonely.name == LONELY and lonely.history == [Status.PASS, Status.FLAKY, Status.PASS]
    assert found["Core.Pods"].count(Status.FAIL) == 1 and found["Core.Network"].count(Status.SKIP) == 1


def test_the_category_page_is_written_and_linked(tmp_path: Path) -> None:
    job(tmp_path / "results")
    report = build_report(load_history(tmp_path / "results", now=START), ReportOptions(), now=START)
    index = write_dashboard(report, tmp_path / "dashboard")
    page = index.parent / "jobs" / "job" / "categories.html"
    text = page.read_text()
    assert "Ability to schedule a pod" in text and "Core.Network" in text and "(2 tests)" in text
    assert 'href="categories.html"' in (index.parent / "jobs" / "job" / "grid.html").read_text()


def test_case_names_are_escaped_as_markup_escapes_them(tmp_path: Path) -> None:
    odd = """[sig-node] a <b>name</b> with & and 'single' and "double" quotes"""
    write_job(tmp_path / "results", "job", {odd: "P", HOST_IP: "F"})
    report = build_report(load_history(tmp_path / "results", now=START), ReportOptions(), now=START)
    index = write_dashboard(report, tmp_path / "dashboard")
    text = (index.parent / "jobs" / "job" / "categories.html").read_text()
    assert f'<tr><td title="{escape(odd)}">{escape(odd)}</td>' in text and odd not in text


def test_a_tab_past_the_listed_cases_counts_its_passing_cases_and_lists_every_other(tmp_path: Path) -> None:
    rows = {f"[sig-node] case {i}": "PP" for i in range(6)} | {HOST_IP: "FP", LOGS: "PF", NODE_PORT: "SS",
                                                                LONELY: "PK"}
    write_job(tmp_path / "results", "job", rows, properties={NODE_PORT: {"category": "Core.Network"}})
    (loaded,) = load_history(tmp_path / "results", now=START).jobs
    everything = categories(loaded)
    found = {c.name: c for c in categories(loaded, listed=3)}
    # Below the limit every case is listed; past it only the cases that did not pass in every build shown.
    assert sum(len(c.cases) for c in everything) == 10 and all(not c.passing for c in everything)
    uncategorized, network = found[UNCATEGORIZED], found["Core.Network"]
    assert uncategorized.passing == 6 and [case.name for case in uncategorized.cases] == [LONELY, HOST_IP, LOGS]
    assert network.passing == 0 and [case.name for case in network.cases] == [NODE_PORT]
    # The counts stay those of every case.
    assert uncategorized.count(Status.PASS) == 8 and uncategorized.count(Status.FAIL) == 1
    assert uncategorized.count(Status.PASS) == next(c for c in everything if c.name == UNCATEGORIZED).count(Status.PASS)


@pytest.mark.parametrize("joining", ["a name with surrounding blanks", "another row's case"])
def test_past_the_listed_cases_a_case_that_other_rows_join_is_judged_with_them(tmp_path: Path, joining: str) -> None:
    rows = {f"[sig-node] case {i}": "PP" for i in range(6)}
    if joining == "a name with surrounding blanks":
        rows[" [sig-node] case 1 "] = "PF"
        properties = {}
    else:
        rows[HOST_IP] = "PF"
        properties = {HOST_IP: {"ops-readiness-case": "[sig-node] case 1"}}
    write_job(tmp_path / "results", "job", rows, properties=properties)
    (loaded,) = load_history(tmp_path / "results", now=START).jobs
    (uncategorized,) = categories(loaded, listed=3)
    # The case of "[sig-node] case 1" holds both rows, and did not pass in every build: listed, the others counted.
    assert uncategorized.passing == 5
    assert [(case.name, len(case.tests), case.history) for case in uncategorized.cases] == [
        ("[sig-node] case 1", 2, [Status.PASS, Status.FAIL])]


def test_the_page_of_a_tab_past_the_listed_cases_says_how_many_passing_cases_it_leaves_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = {f"[sig-node] case {i}": "P" for i in range(5)} | {HOST_IP: "F", NODE_PORT: "S"}
    write_job(tmp_path / "results", "job", rows)
    monkeypatch.setattr(render, "LISTED_CASES", 4)
    report = build_report(load_history(tmp_path / "results", now=START), ReportOptions(), now=START)
    text = (write_dashboard(report, tmp_path / "dashboard").parent / "jobs" / "job" / "categories.html").read_text()
    assert "5 passing cases not listed" in text and "more than 4 cases" in text
    assert f'<td title="{escape(HOST_IP)}">' in text and f'<td title="{escape(NODE_PORT)}">' in text
    assert "case 0" not in text
    # The summary table counts every case: 5 passed, 1 failed, 1 skipped.
    assert '<td class="num">5</td><td class="num">1</td><td class="num">0</td><td class="num">1</td>' in text
