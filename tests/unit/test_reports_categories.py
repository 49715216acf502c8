"""The category view: rows grouped by category and operational-readiness test case, with verdicts per build."""

from __future__ import annotations

from pathlib import Path

from markupsafe import escape

from winsuite_reports.analysis import ReportOptions
from winsuite_reports.analysis import build_report
from winsuite_reports.categories import UNCATEGORIZED
from winsuite_reports.categories import categories
from winsuite_reports.model import Job
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
