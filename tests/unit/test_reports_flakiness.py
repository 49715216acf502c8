"""TestGrid's flip-based flakiness: the formula, and what the analysis leaves out."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from winsuite_reports.conventions import FailureClass
from winsuite_reports.conventions import RowProperties
from winsuite_reports.evidence import is_infra_failure
from winsuite_reports.flakiness import RowFlakiness
from winsuite_reports.flakiness import analyze
from winsuite_reports.flakiness import flip_flakiness
from winsuite_reports.flakiness import window
from winsuite_reports.job import Job
from winsuite_reports.model import PASS
from winsuite_reports.model import Build
from winsuite_reports.model import Cell
from winsuite_reports.model import LazyCells
from winsuite_reports.model import RowInfo
from winsuite_reports.model import Status
from winsuite_reports.model import status_counts
from winsuite_reports.results import load_history
from winsuite_reports.status import coalesce
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_job

CODE = {"P": Status.PASS, "F": Status.FAIL, "K": Status.FLAKY}


@pytest.mark.parametrize(
    ("codes", "expected"),
    [
        ("", 0.0),
        ("PPPP", 0.0),
        ("FPPP", 25.0),  # one flip in four runs
        ("PFPF", 50.0),  # two pass->fail flips, newest first
        ("FFPP", 25.0),  # two failures in a row are one flip
        ("KPPP", 25.0),  # a FLAKY cell is one flip
        ("KKKK", 100.0),
        ("PFFFP", 0.0),  # a run of three failures is a hard break, ignored
        ("FFFFFFP", 0.0),
    ],
)
def test_flip_flakiness(codes: str, expected: float) -> None:
    assert flip_flakiness([CODE[c] for c in codes]) == pytest.approx(expected)


def test_flip_flakiness_counts_only_considered_runs() -> None:
    # "PFFFPF": the FFF run is skipped, leaving P, P, F considered with one flip.
    assert flip_flakiness([CODE[c] for c in "PFFFPF"]) == pytest.approx(100 / 3)


def rows_of(
    tmp_path: Path, rows: dict[str, str], *, every: int = 3600, days: float = 7
) -> dict[str, RowFlakiness]:
    write_job(tmp_path, "job", rows, every=every)
    (job,) = load_history(tmp_path, now=START).jobs
    return {test.row: test for test in analyze(job, days=days).tests}


def test_analysis_counts_runs_and_ranks_the_flakiest_first(tmp_path: Path) -> None:
    write_job(tmp_path, "job", {"steady": "PPPP", "shaky": "PFPF", "retried": "KPPP"})
    (job,) = load_history(tmp_path, now=START).jobs
    result = analyze(job)
    assert [test.row for test in result.tests] == ["shaky", "retried", "steady"]
    shaky = result.tests[0]
    assert (shaky.flakiness, shaky.passed, shaky.failed, shaky.flaky) == (50.0, 2, 2, 0)
    assert [test.row for test in result.flaky_tests] == ["shaky", "retried"]
    assert result.average == pytest.approx((50 + 25 + 0) / 3)


def test_infrastructure_failures_are_left_out(tmp_path: Path) -> None:
    result = rows_of(tmp_path, {"t": "PIPI", "other": "PPPP"})
    assert (result["t"].flakiness, result["t"].infra_failures, result["t"].failed) == (0.0, 2, 0)


TIMED_OUT = "timeout: the run timeout (2h0m0s) cut it off"
PULL_FAILED = "infrastructure: ErrImagePull: pulling mcr.microsoft.com/windows/nanoserver:ltsc2022"


@pytest.mark.parametrize(
    ("cell", "infrastructure"),
    [
        # the results name a class: infrastructure exactly when it is, whatever the message
        (Cell(Status.FAIL, PULL_FAILED, failure_class=FailureClass.INFRASTRUCTURE), True),
        (Cell(Status.FAIL, "Timeout", failure_class=FailureClass.INFRASTRUCTURE), True),
        (Cell(Status.FAIL, "interrupted: SIGTERM", interrupted=True, failure_class=FailureClass.INFRASTRUCTURE), True),
        (Cell(Status.FAIL, TIMED_OUT, interrupted=True, failure_class=FailureClass.TIMEOUT), False),
        (Cell(Status.FAIL, "Timeout", interrupted=True, failure_class=FailureClass.TIMEOUT), False),
        (Cell(Status.FAIL, "timed out: Timeout", failure_class=FailureClass.TIMEOUT), False),
        (Cell(Status.FAIL, "interrupted: setup", interrupted=True, failure_class=FailureClass.SETUP), False),
        (Cell(Status.FAIL, "Error", failure_class=FailureClass.TEST), False),
        (Cell(Status.FAIL, "expected Running, found Pending", failure_class=FailureClass.TEST), False),
        # interrupted, no class (a run cut off by a signal, no evidence): the run went wrong, not the test
        (Cell(Status.FAIL, "interrupted: SIGTERM received", interrupted=True), True),
        (Cell(Status.FAIL, "", interrupted=True), True),
        # neither: TestGrid's rule, a whole message of one word (Go's ^\w+$: ASCII, to the end of the text)
        (Cell(Status.FAIL, "Timeout"), True),
        (Cell(Status.FAIL, "exit_code_1"), True),
        (Cell(Status.FAIL, "expected the pod to be Running, found Pending"), False),
        (Cell(Status.FAIL, ""), False),
        (Cell(Status.FAIL, "Timeout\n"), False),
        (Cell(Status.FAIL, "Zeitüberschreitung"), False),
        (Cell(Status.FAIL, "Timeout."), False),
    ],
)
def test_which_failures_are_the_infrastructures(cell: Cell, infrastructure: bool) -> None:
    assert is_infra_failure(cell) is infrastructure


def test_a_timeout_is_the_tests_failure_and_a_classed_infrastructure_failure_is_left_out(tmp_path: Path) -> None:
    """Departure.INFRASTRUCTURE_BY_CLASS: as the runs write them (class, evidence, interrupt in the row's properties),
    a timeout the run cut off is a failure of the test, one classed infrastructure is left out whatever its message,
    one interrupted with no class is left out, and one with neither keeps TestGrid's one-word rule."""
    written = {  # per row: its failure's message and properties
        "timed out": (TIMED_OUT, RowProperties(interrupted=True, failure_class=FailureClass.TIMEOUT,
                                               failure_evidence="the run timeout (2h0m0s) cut it off")),
        "timed out, one word": ("Timeout", RowProperties(failure_class=FailureClass.TIMEOUT, timed_out=True)),
        "pull failed": (PULL_FAILED, RowProperties(failure_class=FailureClass.INFRASTRUCTURE,
                                                   failure_evidence="ErrImagePull on pod e2e-1/agnhost")),
        "cut off": ("SIGTERM received", RowProperties(interrupted=True)),
        "one word": ("Error", RowProperties()),
    }
    write_job(tmp_path, "job", {**dict.fromkeys(written, "PFPF"), "other": "PPPP"},
              messages={row: message for row, (message, _) in written.items()},
              properties={row: props.to_junit(attempt=1) for row, (_, props) in written.items()})
    (job,) = load_history(tmp_path, now=START).jobs
    result = {test.row: test for test in analyze(job).tests}
    figures = {row: (test.passed, test.failed, test.infra_failures, test.flakiness) for row, test in result.items()}
    assert figures == {"timed out": (2, 2, 0, 50.0), "timed out, one word": (2, 2, 0, 50.0),
                       "pull failed": (2, 0, 2, 0.0), "cut off": (2, 0, 2, 0.0), "one word": (2, 0, 2, 0.0),
                       "other": (4, 0, 0, 0.0)}


def test_columns_where_every_test_failed_are_left_out(tmp_path: Path) -> None:
    result = rows_of(tmp_path, {"a": "PFPP", "b": "PFPP"})
    assert result["a"].flakiness == 0.0
    assert result["a"].failed == 1  # still counted as a failure, just not as a flip


def test_missing_results_are_not_runs_and_skips_pass_as_in_testgrid(tmp_path: Path) -> None:
    # TestGrid coalesces PASS_WITH_SKIPS to PASS before its analysis.
    result = rows_of(tmp_path, {"t": "P_SF", "other": "PPPP"})
    assert (result["t"].passed, result["t"].failed, result["t"].runs) == (2, 1, 3)
    assert result["t"].flakiness == pytest.approx(100 / 3)


def test_only_the_last_days_are_analysed(tmp_path: Path) -> None:
    # One build a day: with a two-day window only the newest three builds count.
    result = rows_of(tmp_path, {"t": "PPPFPF", "other": "PPPPPP"}, every=86400, days=2)
    assert result["t"].runs == 3
    assert result["t"].flakiness == 0.0


def test_a_test_without_results_in_the_window_is_not_listed(tmp_path: Path) -> None:
    result = rows_of(tmp_path, {"gone": "__PP", "other": "PPPP"}, every=86400, days=1)
    assert list(result) == ["other"]


def _flip_flakiness_walk(statuses: list[Status]) -> float:
    """TestGrid's calculateFlipFlakiness as it walks the statuses, kept as the reference for the fast form."""
    flips = considered = 0
    last_passing = True
    i = 0
    while i < len(statuses):
        run = 0
        while i + run < len(statuses) and statuses[i + run] is Status.FAIL:
            run += 1
        if run >= 3:
            i += run
            if i >= len(statuses):
                break
        considered += 1
        if statuses[i] is Status.FLAKY:
            flips, last_passing = flips + 1, True
        elif statuses[i] is Status.FAIL:
            flips, last_passing = flips + last_passing, False
        else:
            last_passing = True
        i += 1
    return 100 * flips / considered if considered else 0.0


@given(st.lists(st.sampled_from([Status.PASS, Status.FAIL, Status.FLAKY]), max_size=60))
def test_flip_flakiness_agrees_with_testgrids_walk(statuses: list[Status]) -> None:
    assert flip_flakiness(statuses) == _flip_flakiness_walk(statuses)
    assert flip_flakiness("".join(s.value for s in statuses)) == _flip_flakiness_walk(statuses)


def _analysis_cell_by_cell(job: Job, days: float) -> list[RowFlakiness]:
    """The analysis as its definition reads: every cell of the window, one at a time."""
    in_window = {id(build) for build in window(job, days)}
    tests = []
    for key in job.rows:
        codes, passed, failed, flaky, infra = [], 0, 0, 0, 0
        for build, cell in zip(job.builds, job.cells(key), strict=True):
            if id(build) not in in_window:
                continue
            status = coalesce(cell.status, ignore_running=True)
            if status is Status.PASS:
                passed += 1
            elif status is Status.FLAKY:
                flaky += 1
            elif status is Status.NO_RESULT:
                continue
            elif is_infra_failure(cell):
                infra += 1
                continue
            else:
                failed += 1
                everything_failed = not any(
                    coalesce(c.status, ignore_running=True) in (Status.PASS, Status.FLAKY)
                    for c in [build.overall, *build.cells.values()])
                if everything_failed:
                    continue
            codes.append(status.value)
        if passed or failed or flaky:
            tests.append(RowFlakiness(key, flip_flakiness("".join(codes)), passed, failed, flaky, infra))
    return sorted(tests, key=lambda test: (-test.flakiness, test.row))


CELLS = {"P": PASS, "F": Cell(Status.FAIL, "boom", "F"), "I": Cell(Status.FAIL, "Timeout", "F"),
         "K": Cell(Status.FLAKY, "1/2 runs passed", "1/2"), "S": Cell(Status.SKIP, "not here", "S"),
         "R": Cell(Status.RUNNING),
         "N": Cell(Status.FAIL, "infrastructure: ErrImagePull", "F", failure_class=FailureClass.INFRASTRUCTURE),
         "T": Cell(Status.FAIL, "Timeout", "F", interrupted=True, failure_class=FailureClass.TIMEOUT),
         "U": Cell(Status.FAIL, "interrupted: SIGTERM received", "F", interrupted=True)}


@given(rows=st.lists(st.text("PFIKSRNTU_", min_size=8, max_size=8), min_size=1, max_size=4),
       hours=st.lists(st.integers(0, 400), min_size=8, max_size=8), in_order=st.booleans(),
       days=st.sampled_from([1.0, 7.0, 30.0]))
def test_the_analysis_by_runs_is_the_analysis_cell_by_cell(rows: list[str], hours: list[int], in_order: bool,
                                                           days: float) -> None:
    # Builds newest first as usual (the window is the newest ones), or started in any order (it is not).
    if in_order:
        hours = sorted(hours, reverse=True)
    builds = []
    for index, start in enumerate(hours):
        cells = {f"row {r}": CELLS[codes[index]] for r, codes in enumerate(rows) if codes[index] != "_"}
        builds.append(Build(f"{index:03d}", START + start * 3600, START + start * 3600 + 60, PASS, {},
                            status_counts(cells.values()), {}, LazyCells(cells)))
    job = Job("ci", Path("ci"), "d", "ci", False, builds, {f"row {r}": RowInfo(f"row {r}") for r in range(len(rows))})
    assert analyze(job, days=days).tests == _analysis_cell_by_cell(job, days)
