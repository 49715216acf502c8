"""The result files: JUnit rows as TestGrid reads them, event logs read back, finished.json (pure logic)."""

from __future__ import annotations

import json
import os
import stat
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from winsuite.policy.run_config import Output
from winsuite.results import events
from winsuite.results import junit
from winsuite.results import prow
from winsuite.results.build import Build
from winsuite.results.merge import HANDLERS
from winsuite.results.merge import close_unfinished
from winsuite.results.merge import cross_checks
from winsuite.results.merge import final_attempts
from winsuite.results.merge import read_events
from winsuite.results.merge import verdict
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.results.prow import BuildResult
from winsuite.run.summary import evidence_counts
from winsuite.run.summary import result_reasons
from winsuite.run.summary import summarize
from winsuite_reports.conventions import RowProperties
from winsuite_reports.conventions import junit_name
from winsuite_reports.prow import read_build

HOSTILE = '[sig-x] <script>alert("x")</script> & \'quoted\' \x1b[31m'


def rows(attempts: list[Attempt]) -> list[ET.Element]:
    root = ET.fromstring(junit.render(attempts))
    assert root.tag == "testsuites"
    (suite,) = root
    assert suite.get("name") == "Kubernetes e2e suite"
    return list(suite.iter("testcase"))


def test_rows_carry_the_it_prefix_and_the_suite_as_classname() -> None:
    (row,) = rows([Attempt("[sig-node] Pods should get a host IP", "n", Outcome.PASSED, duration=1.25)])
    assert row.get("name") == "[It] [sig-node] Pods should get a host IP"
    assert row.get("classname") == "Kubernetes e2e suite" and row.get("time") == "1.250000"
    assert row.find("failure") is None and row.find("skipped") is None


def test_a_failure_has_a_short_message_and_the_details_in_the_body() -> None:
    details = "Traceback …\n  line 1\nAssertionError: the pod never became Ready"
    (row,) = rows([Attempt("t", "n", Outcome.FAILED, message="AssertionError: never Ready\nsecond line " + "x" * 500,
                           details=details)])
    failure = row.find("failure")
    assert failure is not None
    assert failure.get("message") == "AssertionError: never Ready"
    assert failure.text == details


def test_every_skip_has_its_reason_even_an_empty_one() -> None:
    reasons = [r.find("skipped").get("message") for r in rows([  # type: ignore[union-attr]
        Attempt("a", "n", Outcome.SKIPPED, message="requires a node that runs Windows containers (found: none)"),
        Attempt("b", "n", Outcome.SKIPPED, message=""),
    ])]
    assert reasons == ["requires a node that runs Windows containers (found: none)", "skipped without a reason"]


def test_interrupted_and_timed_out_rows_are_failures_with_properties() -> None:
    (interrupted, timed_out) = rows([
        Attempt("a", "n", Outcome.INTERRUPTED, message="interrupted: SIGTERM received",
                properties=RowProperties(interrupted=True)),
        Attempt("b", "n", Outcome.FAILED, message="TestTimedOut: timed out after 60s",
                properties=RowProperties.from_junit({"timed-out": "true", "tier": "adapted", "unknown": "dropped"})),
    ])
    assert interrupted.find("failure").get("message") == "interrupted: SIGTERM received"  # type: ignore[union-attr]
    props = {p.get("name"): p.get("value") for p in timed_out.iter("property")}
    assert props == {"attempt": "1", "tier": "adapted", "timed-out": "true"}


def test_every_flake_attempt_is_its_own_row() -> None:
    attempts = [Attempt("t", "n", Outcome.FAILED, attempt=1, message="boom"),
                Attempt("t", "n", Outcome.PASSED, attempt=2)]
    found = rows(attempts)
    assert [r.get("name") for r in found] == ["[It] t", "[It] t"]
    assert [{p.get("name"): p.get("value") for p in r.iter("property")}["attempt"] for r in found] == ["1", "2"]
    assert verdict(attempts) == "flaky"
    assert verdict([Attempt("t", "n", Outcome.FAILED), Attempt("t", "n", Outcome.FAILED, attempt=2)]) == "failed"


def test_hostile_names_and_messages_survive_as_text() -> None:
    (row,) = rows([Attempt(HOSTILE, "n", Outcome.FAILED, message=HOSTILE, details=f"<details>{HOSTILE}</details>")])
    assert row.get("name") == "[It] " + HOSTILE.replace("\x1b", "")
    assert row.find("failure").text == f"<details>{HOSTILE}</details>".replace("\x1b", "")  # type: ignore[union-attr]


def test_written_files_are_replaced_atomically(tmp_path: Path) -> None:
    path = tmp_path / "artifacts" / "junit_01.xml"
    junit.write(path, [Attempt("a", "n", Outcome.PASSED)])
    junit.write(path, [Attempt("a", "n", Outcome.PASSED), Attempt("b", "n", Outcome.PASSED)])
    assert len(rows_of(path)) == 2
    assert [p.name for p in path.parent.iterdir()] == ["junit_01.xml"], "no temporary file is left"


def rows_of(path: Path) -> list[ET.Element]:
    return list(ET.parse(path).getroot().iter("testcase"))


def test_event_logs_read_back_with_a_torn_last_line(tmp_path: Path) -> None:
    log = tmp_path / "winsuite-events_01.jsonl"
    done = Attempt("a", "x.py::a", Outcome.PASSED)
    log.write_text("\n".join([
        json.dumps({"event": "collected", "count": 2}),
        json.dumps({"event": "start", "nodeid": "x.py::a"}),
        json.dumps({"event": "attempt", "final": True, "result": json.loads(done.to_json())}),
        json.dumps({"event": "start", "nodeid": "x.py::b", "time": time.time() - 30}),
        '{"event": "attempt", "fin',
    ]))
    record = read_events(log)
    assert record.collected == 2 and not record.finished and [n for n, _ in record.unfinished] == ["x.py::b"]
    (added,) = close_unfinished(record, "SIGTERM received", lambda nodeid: {"x.py::b": "the b test"}[nodeid])
    assert (added.name, added.outcome, added.message) == ("the b test", Outcome.INTERRUPTED,
                                                          "interrupted: SIGTERM received")
    # It lasted from its start until it was cut: what went wrong meanwhile is evidence about it.
    assert 30 <= added.duration < 40 and added.started + added.duration == pytest.approx(time.time(), abs=5)
    assert list(final_attempts(record.attempts)) == ["a", "the b test"]


def test_build_ids_sort_chronologically_and_never_collide(tmp_path: Path) -> None:
    first = prow.new_build_id(tmp_path)
    second = prow.new_build_id(tmp_path)
    assert len(first) == 14 and first.isdigit() and second > first


def test_the_summary_groups_skips_and_names_failures(tmp_path: Path) -> None:
    text = summarize([
        Attempt("ok", "n", Outcome.PASSED),
        Attempt("bad", "n", Outcome.FAILED, message="boom", properties=RowProperties(diagnostics="artifacts/bad/")),
        Attempt("flaky", "n", Outcome.FAILED, message="first"), Attempt("flaky", "n", Outcome.PASSED, attempt=2),
        Attempt("s1", "n", Outcome.SKIPPED, message="requires X"),
        Attempt("s2", "n", Outcome.SKIPPED, message="requires X"),
    ], build_dir=tmp_path, result="FAILURE", interrupted="", dashboard="d/index.html")
    assert "1 passed, 1 failed, 1 flaky, 2 skipped, 0 interrupted" in text
    assert "FAIL bad\n       boom\n       diagnostics: " in text
    assert "   2  requires X" in text and "FLAKY flaky (2 attempts; first failure: first)" in text
    assert "Dashboard: d/index.html" in text


def test_tests_a_blind_watch_left_unjudged_are_counted_in_the_summary_and_metadata(tmp_path: Path) -> None:
    blind = "placement unknown: the pods watch did not see from 08:00:00Z to the end of the run (403 Forbidden)"
    rows = [Attempt("seen", "n", Outcome.PASSED, properties=RowProperties(ran_on="linux-0")),
            Attempt("unseen", "n", Outcome.PASSED, message=blind, properties=RowProperties(failure_evidence=blind))]
    text = summarize(rows, build_dir=tmp_path, result="SUCCESS", interrupted="", dashboard=None)
    assert f"Placement unknown for 1 test(s), not judged where they ran: {blind}" in text
    assert evidence_counts(final_attempts(rows)).metadata()["placement-unknown"] == 1
    assert "placement-unknown" not in evidence_counts(final_attempts(rows[:1])).metadata()


def test_engine_cross_checks_are_counted_apart_from_the_products_tests(tmp_path: Path) -> None:
    def row(name: str, engine: str, outcome: Outcome) -> Attempt:
        return Attempt(name, "n", outcome, message="requires X" if outcome is Outcome.SKIPPED else "",
                       properties=RowProperties(engine=engine))

    rows = [row("a", "native", Outcome.PASSED), row("a", "upstream", Outcome.PASSED),
            row("b", "native", Outcome.SKIPPED), row("b", "upstream", Outcome.SKIPPED)]
    rows += cross_checks(rows)
    text = summarize(rows, build_dir=tmp_path, result="SUCCESS", interrupted="", dashboard=None)
    assert "  2 passed, 0 failed, 0 flaky, 2 skipped, 0 interrupted\n" in text  # the engines' rows, no self-check
    assert ("engines cross-checked on 2 test(s), apart from the counts above: 1 agree, 0 disagree, 1 not compared"
            in text)
    assert "nothing to compare" not in text  # not a skip of the product's


def test_an_engines_disagreement_is_no_failure_class_of_the_product(tmp_path: Path) -> None:
    rows = [Attempt("a", "n", Outcome.PASSED, properties=RowProperties(engine="native")),
            Attempt("a", "n", Outcome.SKIPPED, message="requires X", properties=RowProperties(engine="upstream"))]
    rows += cross_checks(rows)
    assert rows[-1].outcome is Outcome.FAILED  # the engines disagree
    assert evidence_counts(final_attempts(rows)).failure_classes == {}
    text = summarize(rows, build_dir=tmp_path, result="FAILURE", interrupted="", dashboard=None)
    assert "0 disagree" not in text and "1 disagree" in text and "Failures by class" not in text


def test_a_result_its_rows_do_not_explain_says_why(tmp_path: Path) -> None:
    metadata = {"flaky-policy": "1 test(s) passed only on a retry; the job fails on flakes", "flaky": 1,
                "shards-not-passed": ["1/2: FAILURE (shard 1/2 lost: its pod p was deleted)", "2/2: FAILURE"],
                "error": "", "ran-on": {}}
    reasons = result_reasons(metadata)
    assert reasons == ["1 test(s) passed only on a retry; the job fails on flakes",
                       "1/2: FAILURE (shard 1/2 lost: its pod p was deleted)", "2/2: FAILURE"]
    text = summarize([Attempt("ok", "n", Outcome.PASSED)], build_dir=tmp_path, result="FAILURE", interrupted="",
                     dashboard=None, reasons=reasons)
    assert "winsuite: FAILURE\n  why: 1 test(s) passed only on a retry" in text
    assert "  why: 1/2: FAILURE (shard 1/2 lost: its pod p was deleted)\n  why: 2/2: FAILURE\n  1 passed" in text
    assert result_reasons({"flaky": 0, "failure-classes": {}}) == []


def test_an_unknown_event_kind_is_rejected_not_ignored(tmp_path: Path) -> None:
    log = tmp_path / "winsuite-events_01.jsonl"
    log.write_text(events.collected(1).to_line() + json.dumps({"event": "progress", "done": 1}) + "\n")
    with pytest.raises(events.ProtocolError, match=r"unknown event .*progress.* known: collected, start"):
        read_events(log)


def test_every_event_kind_has_a_handler_and_round_trips() -> None:
    assert set(HANDLERS) == set(events.EventKind)
    attempt = Attempt("a", "x.py::a", Outcome.FAILED, message="boom")
    for event in (events.collected(3), events.started("x.py::a"), events.done("x.py::a"),
                  events.attempt_recorded(attempt, final=True), events.finished(1, "")):
        back = events.Event.from_line(event.to_line())
        assert back == event
    decoded = events.Event.from_line(events.attempt_recorded(attempt, final=False).to_line())
    assert decoded is not None and decoded.attempt == attempt and not decoded.final


def test_rows_written_by_winsuite_read_back_by_the_reports_as_testgrid_would(tmp_path: Path) -> None:
    """The writer's JUnit and prow files, read by the reports package: same names, same statuses, no cluster."""
    build = tmp_path / "job" / "20260101000000"
    attempts = [
        Attempt("[sig-node] passes", "t::p", Outcome.PASSED, duration=1.0),
        Attempt("[sig-node] fails", "t::f", Outcome.FAILED, message="boom", details="long\nboom",
                properties=RowProperties(diagnostics="artifacts/fails/")),
        Attempt("[sig-node] flakes", "t::k", Outcome.FAILED, attempt=1, message="first"),
        Attempt("[sig-node] flakes", "t::k", Outcome.PASSED, attempt=2),
        Attempt("[sig-node] skips", "t::s", Outcome.SKIPPED, message="requires X (found Y)"),
        Attempt("[sig-node] cut off", "t::c", Outcome.INTERRUPTED, message="interrupted: SIGTERM",
                properties=RowProperties(interrupted=True)),
    ]
    written = Build(Output(build, build.name))
    written.start(1_767_225_600, {"job": "job"})
    written.judged(junit_name(1), attempts)
    written.finish(BuildResult.FAILURE, {"job": "job"})
    read = read_build(build, now=1_767_225_700)
    statuses = {name: cell.status.name for name, cell in read.cells.items()}
    assert statuses == {"[sig-node] passes": "PASS", "[sig-node] fails": "FAIL", "[sig-node] flakes": "FLAKY",
                        "[sig-node] skips": "SKIP", "[sig-node] cut off": "FAIL"}
    assert read.cells["[sig-node] fails"].diagnostics == "artifacts/fails/"
    assert read.cells["[sig-node] cut off"].interrupted


def test_two_engines_of_one_test_are_told_apart_and_cross_checked() -> None:
    def row(name: str, engine: str, outcome: Outcome, attempt: int = 1) -> Attempt:
        return Attempt(name, "n", outcome, attempt=attempt, properties=RowProperties(engine=engine))

    attempts = [row("agree", "native", Outcome.PASSED), row("agree", "upstream", Outcome.FAILED, 1),
                row("agree", "upstream", Outcome.PASSED, 2), row("differ", "native", Outcome.PASSED),
                row("differ", "upstream", Outcome.FAILED), row("alone", "native", Outcome.FAILED),
                row("skipped", "upstream", Outcome.PASSED), row("cut", "native", Outcome.INTERRUPTED),
                row("cut", "upstream", Outcome.PASSED), row("both-skip", "native", Outcome.SKIPPED),
                row("both-skip", "upstream", Outcome.SKIPPED)]
    attempts.insert(7, Attempt("skipped", "n", Outcome.SKIPPED, message="requires a Windows kernel (found: none)",
                               properties=RowProperties(engine="native")))
    by_test = final_attempts(attempts)
    assert verdict(by_test["agree (upstream engine)"]) == "flaky" and verdict(by_test["alone"]) == "failed"
    checks = {c.name.removeprefix("[winsuite] engines agree: "): c for c in cross_checks(attempts)}
    assert set(checks) == {"agree", "differ", "skipped", "cut", "both-skip"}  # one engine alone: nothing to compare
    both_skipped = checks["both-skip"]  # nothing ran on either side: no agreement to count
    assert both_skipped.outcome is Outcome.SKIPPED and both_skipped.message.startswith("nothing to compare: native")
    assert checks["agree"].outcome is Outcome.PASSED
    differ = checks["differ"]
    assert differ.outcome is Outcome.FAILED and differ.message == "the engines disagree: native passed, upstream failed"
    skipped = checks["skipped"]
    assert skipped.outcome is Outcome.FAILED and skipped.message == (
        "the engines disagree: native skipped (requires a Windows kernel (found: none)), upstream passed")
    assert checks["cut"].outcome is Outcome.SKIPPED and checks["cut"].message == (
        "not compared: native interrupted, upstream passed")


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600)])
def test_a_file_written_whole_follows_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    before = os.umask(umask)
    try:
        junit.write_atomically(tmp_path / "finished.json", b"{}")
    finally:
        os.umask(before)
    assert stat.S_IMODE((tmp_path / "finished.json").stat().st_mode) == mode
    assert [p.name for p in tmp_path.iterdir()] == ["finished.json"]
