"""winsuite's TestGrid figures held to TestGrid's own code: its updater, tabulator and summarizer read the same
builds from a loopback GCS server, and every tab's status, latest green, recent columns passed, alerts and
flakiness per test must be what `winsuite report --format json` says (tests/tools/testgrid_pipeline.py).

The histories are the edge cases that matter, plus a generated 60-build x 300-test one. Where winsuite departs
from TestGrid on purpose (winsuite_reports.departures), the test holds the departure to what the page states: it
undoes it in winsuite's figures (skipped cells, tests TestGrid does not rate), or, for which failures are the
infrastructure's, compares winsuite's figures of a history with TestGrid's of a copy written as the departure reads it.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

from tests.tools import testgrid_pipeline
from tests.tools.gcs_server import GcsServer
from tests.tools.go_programs import GoMissing
from tests.tools.testgrid_pipeline import Pipeline
from tests.tools.testgrid_pipeline import TabOptions
from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import IT_PREFIX
from winsuite_reports.conventions import SUITE_NAME
from winsuite_reports.conventions import FailureClass
from winsuite_reports.conventions import RowProperties
from winsuite_reports.conventions import artifacts_dir
from winsuite_reports.conventions import junit_name
from winsuite_reports.departures import FLAKINESS_FIGURE
from winsuite_reports.departures import Departure
from winsuite_reports.synthetic import FAILURE
from winsuite_reports.synthetic import write_job

HOUR = 3600
_T = TypeVar("_T")
ROOT = Path(__file__).resolve().parents[2]
HOSTILE = (
    '<script>alert("x")</script> & \'quoted\' ü 日本 [sig-windows] a.b/c%20d?e#f',
    "[sig-node] a new\nline, a tab\tand " + "very long " * 100,
)
EDGE_CASES: dict[str, dict[str, str]] = {
    "all-green": {"a": "P" * 10, "b": "P" * 10},
    "last-build-failed-once": {"a": "F" + "P" * 9, "b": "P" * 10},
    "failing-three-in-a-row": {"a": "FFF" + "P" * 7, "b": "P" * 10},
    "failure-streak-through-a-flake": {"a": "FKFFFP" + "P" * 4, "b": "P" * 10},
    "retried-in-every-build": {"a": "K" * 10, "b": "P" * 10},
    "skipped-tests": {"a": "S" * 10, "b": "P" * 10, "c": "SFSPSPSPSP"},
    "hostile-test-names": {HOSTILE[0]: "FFFPPPPPPP", HOSTILE[1]: "PKPFPPPPPP", "b": "P" * 10},
    # With the Overall row a second row, a build where the one test failed is a column where every row failed.
    "a-single-test": {"a": "PFPPFPPPPP"},
}
NEVER_FINISHED = "a-build-that-never-finished"  # the newest build still running, one 27 h old never finished
GENERATED = "generated-60-builds-300-tests"


@dataclass(frozen=True)
class Failed:
    """A failed row as a run writes it (its failure's message, class and interrupt), and whether the dashboard counts
    it as the infrastructure's: Departure.INFRASTRUCTURE_BY_CLASS, as the page states it."""

    message: str
    infrastructure: bool
    failure_class: str = ""
    interrupted: bool = False


# The classed history's cells beyond synthetic's codes (P pass, F a plain failure, I a one-word one, K a retry).
FAILED = {
    # classed infrastructure, whatever its message: TestGrid reads a failure of the test
    "N": Failed("infrastructure: ErrImagePull: pulling mcr.microsoft.com/windows/nanoserver:ltsc2022 on win-0",
                infrastructure=True, failure_class=FailureClass.INFRASTRUCTURE),
    # cut off by the run timeout: the test's failure, interrupted or not
    "T": Failed("timeout: the run timeout (2h0m0s) cut it off", infrastructure=False,
                failure_class=FailureClass.TIMEOUT, interrupted=True),
    # a timeout with a one-word message: TestGrid reads an infrastructure failure
    "Y": Failed("Timeout", infrastructure=False, failure_class=FailureClass.TIMEOUT, interrupted=True),
    # an assertion with a one-word message: TestGrid reads an infrastructure failure
    "W": Failed("Error", infrastructure=False, failure_class=FailureClass.TEST),
    # interrupted, no class (a run cut off by a signal, no evidence): TestGrid reads a failure of the test
    "U": Failed("SIGTERM received", infrastructure=True, interrupted=True),
}
SERIAL = " [Serial]"  # a row whose name has it is in each build's junit_02.xml (the serial phase), the others in 01
RETRIED_ACROSS_FILES = "[sig-windows] retried in the serial phase"  # its failed attempt in 01, its retry in 02
CLASSED = "classed-interrupted-two-files"
CLASSED_ROWS = {
    "[sig-windows] pulls an image": "PNPNPPPPPP",
    "[sig-windows] times out": "PTPPPPPPPP",
    "[sig-windows] timed out three times": "TTTPPPPPPP",
    "[sig-windows] times out with one word": "PPYPPYPPPP",
    "[sig-windows] asserts with one word": "PPWPPWPPPP",
    "[sig-windows] cut off by a signal": "PPPUPPPPPP",
    "[sig-windows] fails with one word, no class": "PIPPPPPPPP",
    "[sig-node] fails, no class": "PPFPPPPPPP",
    "[sig-windows] reboots a node" + SERIAL: "PPPPTNPUPW",
    "[sig-windows] drains a node" + SERIAL: "PPPPPPPPPP",
    RETRIED_ACROSS_FILES: "KPPKPPPPPP",
    "b": "P" * 10,
}
# The same builds, each failure's message one word exactly where the dashboard counts it as the infrastructure's,
# no class nor interrupt: TestGrid reads this copy as winsuite reads the original (Departure.INFRASTRUCTURE_BY_CLASS).
AS_THE_DEPARTURE_READS = "classed-interrupted-two-files-as-the-departure-reads-it"
# The classed rows where TestGrid's figures of the original differ from winsuite's: a cell of N, Y, W or U.
DEPARTED = frozenset({"[sig-windows] pulls an image", "[sig-windows] times out with one word",
                      "[sig-windows] asserts with one word", "[sig-windows] cut off by a signal",
                      "[sig-windows] reboots a node" + SERIAL})
JOBS = [*EDGE_CASES, NEVER_FINISHED, GENERATED, CLASSED, AS_THE_DEPARTURE_READS]


def generated_rows(builds: int, tests: int, seed: int) -> dict[str, str]:
    """Mostly green, with the kinds of rows a real tab has: rare failures, flakes, infrastructure failures, hard
    breaks, outages still open (some through a flake, some of tests since removed), tests removed long ago while
    failing, tests always skipped, tests added part-way (no result before)."""
    rng = random.Random(seed)
    rows = {}
    for i in range(tests):
        kind = rng.random()
        if kind < 0.03:
            codes = "S" * builds
        elif kind < 0.10:
            codes = "".join(rng.choices("PFKI", weights=(95, 1, 3, 1), k=builds))
        elif kind < 0.12:
            start, length = rng.randrange(builds), rng.randrange(2, 12)
            codes = "".join("F" if start <= b < start + length else "P" for b in range(builds))
        elif kind < 0.14:
            removed, broken = rng.randrange(4), rng.randrange(3, 9)
            codes = ("_" * removed + "F" + "K" * rng.randrange(2) + "F" * broken + "P" * builds)[:builds]
        elif kind < 0.15:
            removed = rng.randrange(10, builds // 2)  # failing when removed, out of the recent columns since
            codes = ("_" * removed + "F" * rng.randrange(3, 6) + "P" * builds)[:builds]
        elif kind < 0.16:
            added = rng.randrange(1, builds)
            codes = "P" * added + "_" * (builds - added)
        else:
            codes = "".join("F" if rng.random() < 0.0005 else "P" for _ in range(builds))
        rows[f"[sig-windows] Area {i % 20} should behave as case {i} [Conformance]"] = codes
    return rows


def write_histories(root: Path, now: int) -> dict[str, list[str]]:
    """Every job under `root`, its builds started in the last 34 hours; returns each job's build ids, newest first."""
    ids = {job: write_job(root, job, rows, start=now - 10 * HOUR, every=HOUR) for job, rows in EDGE_CASES.items()}
    ids[NEVER_FINISHED] = write_job(root, NEVER_FINISHED, {"a": "P" * 12, "b": "PPPPPPPPPFPP"}, start=now - 34 * HOUR,
                                    every=3 * HOUR)
    for build in (ids[NEVER_FINISHED][0], ids[NEVER_FINISHED][9]):  # running (1 h old); never finished (28 h old)
        (root / NEVER_FINISHED / build / FINISHED).unlink()
    ids[GENERATED] = write_job(root, GENERATED, generated_rows(60, 300, seed=31), start=now - 31 * HOUR,
                               every=HOUR // 2)
    ids[CLASSED] = write_classed(root, CLASSED, start=now - 10 * HOUR, as_the_departure_reads=False)
    ids[AS_THE_DEPARTURE_READS] = write_classed(root, AS_THE_DEPARTURE_READS, start=now - 10 * HOUR,
                                                as_the_departure_reads=True)
    return ids


def write_classed(root: Path, job: str, *, start: int, as_the_departure_reads: bool) -> list[str]:
    """CLASSED_ROWS as a run writes them (FAILED's messages, classes and interrupts), each build in two files; or,
    `as_the_departure_reads`, each failure of FAILED written with no class nor interrupt, its message one word exactly
    where the dashboard counts it as the infrastructure's."""
    count = len(CLASSED_ROWS["b"])

    def failed(row: str, number: int) -> Failed | None:
        return FAILED.get(CLASSED_ROWS[row][count - 1 - number])

    def message_of(row: str, number: int) -> str:
        cell = failed(row, number)
        if cell is None:
            return FAILURE
        if as_the_departure_reads:
            return "Infrastructure" if cell.infrastructure else f"the test's own failure: {cell.message}"
        return cell.message

    def properties_of(row: str, number: int, code: str) -> dict[str, str]:
        cell = failed(row, number)
        if cell is None or as_the_departure_reads:
            return {}
        return RowProperties(interrupted=cell.interrupted, failure_class=cell.failure_class,
                             failure_evidence=cell.message if cell.failure_class else "").to_junit(attempt=1)

    rows = {row: "".join("F" if code in FAILED else code for code in codes) for row, codes in CLASSED_ROWS.items()}
    ids = write_job(root, job, rows, start=start, every=HOUR, message_of=message_of, properties_of=properties_of)
    for build in ids:
        split_phases(artifacts_dir(root / job / build))
    return ids


def split_phases(artifacts: Path) -> None:
    """A build's junit_01.xml as two phases: its [Serial] rows, and the retry of RETRIED_ACROSS_FILES, moved to
    junit_02.xml (both files' suite has the same name, so their rows are one grid's)."""
    first = ET.parse(artifacts / junit_name(1))
    (suite,) = first.getroot()
    serial = ET.Element("testsuite", name=SUITE_NAME)
    retried = [case for case in suite if case.get("name") == IT_PREFIX + RETRIED_ACROSS_FILES]
    for case in list(suite):
        if case.get("name", "").endswith(SERIAL) or (len(retried) > 1 and case is retried[-1]):
            suite.remove(case)
            serial.append(case)
    first.write(artifacts / junit_name(1), encoding="utf-8", xml_declaration=True)
    second = ET.Element("testsuites")
    second.append(serial)
    ET.ElementTree(second).write(artifacts / junit_name(2), encoding="utf-8", xml_declaration=True)


@dataclass(frozen=True)
class Figures:
    """What both say of one tab, in the same terms."""

    status: str
    latest_green: str | None
    recent_columns: tuple[int, int]  # passed, completed
    cells: tuple[int, int]  # passed, filled: TestGrid's terms, a skipped cell a passed one
    alerts: dict[str, tuple[int, str, str, str | None]]  # fail count, first fail, latest fail, last pass
    flakiness: dict[str, tuple[int, int, int]]  # passed, failed, infra failures
    flakiness_percent: dict[str, float]


TESTGRID_STATUS = {"PASS": "PASSING", "FAIL": "FAILING"}  # the summary's names for what the dashboards show
TAB_STATS = re.compile(r"(\d+) of (\d+) \([\d.]+%\) recent columns passed \((\d+) of (\d+) or [\d.]+% cells")


def figures_from_testgrid(job: str, tab: Mapping[str, object]) -> Figures:
    def row(name: object) -> str:
        text = str(name)
        if text == f"{job}.Overall":
            return "Overall"
        assert text.startswith(f"{SUITE_NAME}.{IT_PREFIX}"), text
        return text.removeprefix(f"{SUITE_NAME}.{IT_PREFIX}")

    stats = TAB_STATS.match(str(tab["status"]).removeprefix("Tab stats: "))
    assert stats, tab["status"]
    healthiness = _object(tab["healthiness"])
    tests = [_object(test) for test in _list(healthiness["tests"]) if row(_object(test)["display_name"]) != "Overall"]
    status = str(tab["overall_status"])
    return Figures(
        status=TESTGRID_STATUS.get(status, status),
        latest_green=None if tab["latest_green"] == "no recent greens" else str(tab["latest_green"]),
        recent_columns=(int(stats[1]), int(stats[2])),
        cells=(int(stats[3]), int(stats[4])),
        alerts={
            row(alert["display_name"]): (int(str(alert["fail_count"])), str(alert["fail_build_id"]),
                                         str(alert["latest_fail_build_id"]), str(alert["pass_build_id"]) or None)
            for alert in map(_object, _list(tab["failing_test_summaries"]))
        },
        flakiness={
            row(test["display_name"]): (int(str(test["passed_non_infra_runs"])),
                                        int(str(test["failed_non_infra_runs"])), int(str(test["failed_infra_runs"])))
            for test in tests
        },
        flakiness_percent={row(test["display_name"]): float(str(test["flakiness"])) for test in tests},
    )


def figures_from_winsuite(tab: Mapping[str, object]) -> Figures:
    """winsuite's JSON, its stated departures undone: skipped cells back among passed ones, tests TestGrid would
    not rate left out."""
    recent, cells = _object(tab["recent_columns"]), _object(tab["cells"])
    skipped = int(str(cells["skipped"]))
    tests = [test for test in map(_object, _list(_object(tab["flakiness"])["tests"])) if test["rated_by_testgrid"]]
    return Figures(
        status=str(tab["status"]),
        latest_green=None if tab["latest_green"] is None else str(tab["latest_green"]),
        recent_columns=(int(str(recent["passed"])), int(str(recent["completed"]))),
        cells=(int(str(cells["passed"])) + skipped, int(str(cells["filled"])) + skipped),
        alerts={
            str(alert["test"]): (int(str(alert["fail_count"])), str(alert["first_fail"]), str(alert["latest_fail"]),
                                 None if alert["last_pass"] is None else str(alert["last_pass"]))
            for alert in map(_object, _list(tab["alerts"]))
        },
        flakiness={
            str(test["test"]): (int(str(test["passed"])), int(str(test["failed"])), int(str(test["infra_failures"])))
            for test in tests
        },
        flakiness_percent={str(test["test"]): float(str(test["flakiness"])) for test in tests},
    )


def _object(value: object) -> dict[str, object]:
    assert isinstance(value, dict)
    return value


def _list(value: object) -> list[object]:
    assert isinstance(value, list)
    return value


@pytest.fixture(scope="module")
def testgrid(gcs: GcsServer, tmp_path_factory: pytest.TempPathFactory) -> Pipeline:
    try:
        programs = testgrid_pipeline.build()
    except GoMissing as err:
        pytest.skip(str(err))
    return Pipeline(programs, gcs, tmp_path_factory.mktemp("testgrid"))


@pytest.fixture(scope="module")
def histories(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    results = tmp_path_factory.mktemp("results")
    return results, write_histories(results, int(time.time()))


@pytest.fixture(scope="module")
def summaries(testgrid: Pipeline, histories: tuple[Path, dict[str, list[str]]]) -> dict[str, tuple[Figures, Figures]]:
    """Per job: (TestGrid's figures, winsuite's figures), both read from the same builds at the same time."""
    results, _ = histories
    theirs = testgrid.summarize(results, TabOptions())
    report = subprocess.run([sys.executable, "-m", "winsuite.cli", "report", "--results", str(results), "--format",
                             "json"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert report.returncode == 0, report.stderr
    ours = {str(tab["job"]): tab for tab in json.loads(report.stdout)["tabs"]}
    assert sorted(theirs) == sorted(ours) == sorted(JOBS)
    return {job: (figures_from_testgrid(job, theirs[job]), figures_from_winsuite(ours[job])) for job in JOBS}


@pytest.mark.parametrize("job", JOBS)
def test_winsuite_agrees_with_testgrid(summaries: dict[str, tuple[Figures, Figures]], job: str) -> None:
    """Every figure, but the flakiness of rows where Departure.INFRASTRUCTURE_BY_CLASS applies (held to it below)."""
    theirs, ours = summaries[job]
    departed = DEPARTED if job == CLASSED else frozenset()
    assert ours.status == theirs.status
    assert ours.latest_green == theirs.latest_green
    assert ours.recent_columns == theirs.recent_columns
    assert ours.cells == theirs.cells
    assert ours.alerts == theirs.alerts
    assert _without(ours.flakiness, departed) == _without(theirs.flakiness, departed)
    assert set(ours.flakiness) == set(theirs.flakiness)  # the same tests rated
    assert _without(ours.flakiness_percent, departed) == pytest.approx(_without(theirs.flakiness_percent, departed),
                                                                       abs=0.01)


def _without(figures: dict[str, _T], rows: frozenset[str]) -> dict[str, _T]:
    return {row: value for row, value in figures.items() if row not in rows}


def test_which_failures_are_the_infrastructures_is_the_stated_departure(
        summaries: dict[str, tuple[Figures, Figures]]) -> None:
    """Departure.INFRASTRUCTURE_BY_CLASS, adjusted for explicitly: winsuite's flakiness of the classed history is
    TestGrid's of its copy written as the departure reads it (a one-word message exactly where winsuite counts an
    infrastructure failure); on the original, TestGrid's differs where the page says it does, failures moved between
    its failed and infrastructure counts, passes the same."""
    assert Departure.INFRASTRUCTURE_BY_CLASS in FLAKINESS_FIGURE  # the pages state it beside the flakiness figures
    theirs, ours = summaries[CLASSED]
    as_stated, _ = summaries[AS_THE_DEPARTURE_READS]
    assert ours.flakiness == as_stated.flakiness
    assert ours.flakiness_percent == pytest.approx(as_stated.flakiness_percent, abs=0.01)
    for row in DEPARTED:
        (passed, failed, infra), (their_passed, their_failed, their_infra) = ours.flakiness[row], theirs.flakiness[row]
        assert (passed, failed + infra) == (their_passed, their_failed + their_infra)
        assert infra != their_infra, row


def test_the_edge_cases_show_what_they_are_named_for(summaries: dict[str, tuple[Figures, Figures]],
                                                     histories: tuple[Path, dict[str, list[str]]]) -> None:
    """The cases are not vacuous: each has the figure it was written for (both sides agree on them above)."""
    figures = {job: ours for job, (_, ours) in summaries.items()}
    results, ids = histories
    assert figures["all-green"].status == "PASSING"
    assert figures["last-build-failed-once"].status == "FLAKY"
    assert figures["failing-three-in-a-row"].alerts["a"] == (3, ids["failing-three-in-a-row"][2],
                                                             ids["failing-three-in-a-row"][0],
                                                             ids["failing-three-in-a-row"][3])
    streak = ids["failure-streak-through-a-flake"]
    assert figures["failure-streak-through-a-flake"].alerts["a"] == (4, streak[4], streak[0], streak[5])
    assert figures["retried-in-every-build"].recent_columns == (10, 10)
    assert "a" not in figures["retried-in-every-build"].flakiness  # not rated by TestGrid; rated by winsuite
    assert figures["skipped-tests"].cells[0] > 0
    assert set(figures["hostile-test-names"].alerts) == {HOSTILE[0], "Overall"}
    assert HOSTILE[1] in figures["hostile-test-names"].flakiness
    assert figures["a-single-test"].flakiness_percent == {"a": 0.0}
    assert figures[NEVER_FINISHED].recent_columns[1] == 10
    generated = figures[GENERATED]
    assert len(generated.alerts) > 5 and len(generated.flakiness) > 250
    assert generated.latest_green not in (None, *ids[GENERATED][:10])  # green last beyond the recent columns
    classed = figures[CLASSED]
    assert classed.flakiness["[sig-windows] pulls an image"] == (8, 0, 2)  # classed infrastructure: left out
    assert classed.flakiness["[sig-windows] times out"] == (9, 1, 0)  # interrupted, class timeout: the test's
    assert classed.flakiness["[sig-windows] times out with one word"] == (8, 2, 0)
    assert classed.flakiness["[sig-windows] asserts with one word"] == (8, 2, 0)
    assert classed.flakiness["[sig-windows] cut off by a signal"] == (9, 0, 1)  # interrupted, no class: left out
    assert classed.flakiness["[sig-windows] fails with one word, no class"] == (9, 0, 1)  # TestGrid's rule
    assert classed.alerts["[sig-windows] timed out three times"][0] == 3
    assert classed.flakiness["[sig-windows] reboots a node" + SERIAL] == (6, 2, 2)  # read from junit_02.xml
    assert classed.flakiness_percent[RETRIED_ACROSS_FILES] == 20.0  # its two files' attempts merged: flaky twice
    newest = artifacts_dir(results / CLASSED / ids[CLASSED][0])
    retried = {name: [case.find("failure") is not None for case in ET.parse(newest / name).iter("testcase")
                      if case.get("name") == IT_PREFIX + RETRIED_ACROSS_FILES] for name in map(junit_name, (1, 2))}
    assert retried == {junit_name(1): [True], junit_name(2): [False]}  # failed in the parallel phase, passed after
