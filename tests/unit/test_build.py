"""A build and its one writer: started.json, each phase's JUnit as rows finish and once judged, finished.json once."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from winsuite.policy.run_config import Output
from winsuite.results import junit
from winsuite.results.build import Build
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.results.prow import BuildResult
from winsuite_reports.conventions import RowProperties


def row(name: str, outcome: Outcome = Outcome.PASSED, properties: RowProperties | None = None) -> Attempt:
    return Attempt(name, f"t.py::{name}", outcome, properties=properties or RowProperties())


def names(path: Path) -> list[str]:
    return [r.name for r in junit.read(path)]


def test_rows_show_as_they_finish_then_judged_in_their_place(tmp_path: Path) -> None:
    build = Build(Output(tmp_path / "b", "b"))
    phase = tmp_path / "b" / "artifacts" / "junit_01.xml"
    build.judged("junit_01.xml", [row("prepull")])  # rows that need no judging come first
    build.row_finished("junit_01.xml", row("a"))
    assert names(phase) == ["prepull", "a"]  # a live reader sees the row at once
    build.row_finished("junit_02.xml", row("serial"))
    build.row_finished("junit_01.xml", row("b", Outcome.FAILED))
    build.judged("junit_01.xml", [row("a", properties=RowProperties(ran_on="linux")),
                                  row("b", Outcome.FAILED, RowProperties(failure_class="test"))])
    assert [(r.name, r.properties.failure_class) for r in junit.read(phase)] == [
        ("prepull", ""), ("a", ""), ("b", "test")]
    assert junit.read(phase)[1].properties.ran_on == "linux"  # the judged row replaced the live one
    assert [r.name for r in build.rows] == ["prepull", "a", "b", "serial"]  # phase by phase, live rows included
    assert build.phases == ["junit_01.xml", "junit_02.xml"] and build.rows_of("junit_03.xml") == []


def test_a_phase_judged_without_rows_still_has_its_file_and_labels_are_the_files_only(tmp_path: Path) -> None:
    def label(phase: str, rows: list[Attempt]) -> list[Attempt]:
        labelled = [dataclasses.replace(r, properties=RowProperties(category="core")) for r in rows]
        return labelled + ([row("[ops-readiness] a case that selects nothing", Outcome.SKIPPED)]
                           if phase == "junit_01.xml" else [])

    build = Build(Output(tmp_path, "b"), label=label)
    build.judged("junit_01.xml", [])
    assert names(tmp_path / "artifacts" / "junit_01.xml") == ["[ops-readiness] a case that selects nothing"]
    build.judged("junit_02.xml", [row("serial")])
    assert junit.read(tmp_path / "artifacts" / "junit_02.xml")[0].properties.category == "core"
    assert [(r.name, r.properties.category) for r in build.rows] == [("serial", "")]


def test_started_then_finished_once_then_the_latest_build(tmp_path: Path) -> None:
    job_dir = tmp_path / "job"
    build = Build(Output(job_dir / "20261125000000", "20261125000000", job_dir))
    build.start(1_767_225_600.7, {"job": "job"})
    started = json.loads((job_dir / "20261125000000" / "started.json").read_text())
    assert started["timestamp"] == 1_767_225_600 and started["metadata"] == {"job": "job"} and started["node"]
    assert not (job_dir / "latest-build.txt").exists()
    build.finish(BuildResult.ABORTED, {"interrupted": "SIGINT received"})
    finished = json.loads((job_dir / "20261125000000" / "finished.json").read_text())
    assert finished["passed"] is False and finished["result"] == "ABORTED" and build.result is BuildResult.ABORTED
    assert json.loads((job_dir / "20261125000000" / "artifacts" / "metadata.json").read_text()) == finished["metadata"]
    assert (job_dir / "latest-build.txt").read_text() == "20261125000000"
    with pytest.raises(ValueError, match=r"finished\.json is written once"):
        build.finish(BuildResult.SUCCESS, {})
    assert json.loads((job_dir / "20261125000000" / "finished.json").read_text()) == finished


def test_a_stored_result_is_read_as_the_enum_and_anything_else_is_a_failure() -> None:
    assert [BuildResult.stored(v) for v in ("SUCCESS", "ABORTED", "FAILURE", "PASSED", None, 1)] == [
        BuildResult.SUCCESS, BuildResult.ABORTED, BuildResult.FAILURE, BuildResult.FAILURE, BuildResult.FAILURE,
        BuildResult.FAILURE]
    assert [r.passed for r in BuildResult] == [True, False, False]
