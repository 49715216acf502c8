"""JUnit attempts become TestGrid cells; same-named attempts merge into one."""

from __future__ import annotations

from pathlib import Path

import pytest

from winsuite_reports.junit import MalformedJunit
from winsuite_reports.junit import elide
from winsuite_reports.junit import is_junit
from winsuite_reports.junit import merge
from winsuite_reports.junit import read_attempts
from winsuite_reports.model import Cell
from winsuite_reports.model import Status


def junit(tmp_path: Path, body: str, root: str = "testsuites") -> Path:
    path = tmp_path / "junit_01.xml"
    path.write_text(f'<?xml version="1.0" encoding="utf-8"?><{root}>{body}</{root}>', encoding="utf-8")
    return path


def cells(tmp_path: Path, testcases: str) -> dict[str, Cell]:
    suite = f'<testsuite name="Kubernetes e2e suite">{testcases}</testsuite>'
    return {attempt.key: attempt.cell for attempt in read_attempts(junit(tmp_path, suite))}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("junit_01.xml", True),
        ("junit_02.xml", True),
        ("junit_core-os_01.xml", True),
        ("junit_runner.xml", True),
        ("junit.xml", True),
        ("test.xml", True),
        ("results.xml", False),
        ("junit_01.xml.gz", False),
    ],
)
def test_junit_files_are_recognised_with_testgrids_pattern(name: str, expected: bool) -> None:
    assert is_junit(name) is expected


def test_testcase_children_become_statuses_and_it_prefix_is_stripped(tmp_path: Path) -> None:
    result = cells(
        tmp_path,
        '<testcase name="[It] passes"/>'
        '<testcase name="[It] fails"><failure message="boom">stack</failure></testcase>'
        '<testcase name="errors"><error message="setup broke"/></testcase>'
        '<testcase name="skips"><skipped message="requires Windows (found linux)"/></testcase>',
    )
    assert {key: cell.status for key, cell in result.items()} == {
        "passes": Status.PASS,
        "fails": Status.FAIL,
        "errors": Status.FAIL,
        "skips": Status.SKIP,
    }
    assert result["fails"].message == "boom\nstack"
    assert result["fails"].icon == "F"
    assert result["skips"].message == "requires Windows (found linux)"
    assert result["skips"].icon == "S"


@pytest.mark.parametrize("skipped", ["<skipped/>", '<skipped message=""/>', '<skipped message="skipped"/>'])
def test_a_bare_skip_leaves_no_cell_as_in_testgrid(tmp_path: Path, skipped: str) -> None:
    assert cells(tmp_path, f'<testcase name="focus artifact">{skipped}</testcase>') == {}


def test_nested_suites_and_a_testsuite_root_are_read(tmp_path: Path) -> None:
    nested = '<testsuite name="outer"><testsuite name="inner"><testcase name="deep"/></testsuite></testsuite>'
    assert [a.key for a in read_attempts(junit(tmp_path, nested, root="testsuites"))] == ["deep"]
    assert [a.key for a in read_attempts(junit(tmp_path, '<testcase name="flat"/>', root="testsuite"))] == [
        "flat"
    ]


def test_properties_carry_diagnostics_interrupts_and_timeouts(tmp_path: Path) -> None:
    result = cells(
        tmp_path,
        '<testcase name="cut off"><properties><property name="interrupted" value="true"/>'
        '<property name="diagnostics" value="artifacts/cut-off/"/></properties>'
        '<failure message="killed"/></testcase>'
        '<testcase name="slow"><properties><property name="timed-out" value="true"/></properties>'
        '<failure message="deadline"/></testcase>',
    )
    assert result["cut off"].interrupted
    assert result["cut off"].message == "interrupted: killed"
    assert result["cut off"].diagnostics == "artifacts/cut-off/"
    assert result["slow"].message == "timed out: deadline"
    assert not result["slow"].interrupted


def test_a_failure_without_message_falls_back_to_system_err(tmp_path: Path) -> None:
    result = cells(
        tmp_path, '<testcase name="t"><failure/><system-err>panic: nil map</system-err></testcase>'
    )
    assert result["t"].message == "panic: nil map"


@pytest.mark.parametrize(
    "document",
    ["<testsuites><testcase name='x'>", "<html><body/></html>", ""],
    ids=["truncated", "not junit", "empty"],
)
def test_a_malformed_file_raises_a_malformed_junit_naming_it(tmp_path: Path, document: str) -> None:
    path = tmp_path / "junit_01.xml"
    path.write_text(document)
    with pytest.raises(MalformedJunit, match=r"junit_01\.xml"):
        read_attempts(path)


def test_merged_pass_and_fail_attempts_are_flaky_with_an_n_of_n_icon() -> None:
    cell = merge([Cell(Status.FAIL, "boom", "F", "artifacts/t/"), Cell(Status.PASS), Cell(Status.PASS)])
    assert cell.status is Status.FLAKY
    assert cell.icon == "2/3"
    assert cell.message == "2/3 runs passed: boom"
    assert cell.diagnostics == "artifacts/t/"


def test_merged_attempts_without_a_mix_take_the_most_severe() -> None:
    failed = merge([Cell(Status.FAIL, "a", "F"), Cell(Status.FAIL, "b", "F")])
    assert (failed.status, failed.icon, failed.message) == (Status.FAIL, "0/2", "0/2 runs passed: a")
    skipped = merge([Cell(Status.PASS), Cell(Status.SKIP, "why", "S")])
    assert (skipped.status, skipped.icon) == (Status.SKIP, "2/2")


def test_a_single_attempt_is_its_own_cell() -> None:
    cell = Cell(Status.FAIL, "boom", "F")
    assert merge([cell]) is cell


def test_long_messages_keep_their_start_and_end_within_140_characters() -> None:
    message = "start " + "x" * 300 + " end"
    short = elide(message)
    assert len(short) == 140
    assert short.startswith("start ")
    assert short.endswith(" end")
    assert "..." in short
    assert elide("short") == "short"
