"""Reading the prow layout: builds newest first, Overall cells as TestGrid makes them, malformed artifacts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from winsuite_reports.job import Job
from winsuite_reports.model import Status
from winsuite_reports.results import load_history
from winsuite_reports.results import natural_key
from winsuite_reports.results import read_job
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_build
from winsuite_reports.synthetic import write_job

NOW = START + 86400


def only_job(root: Path, now: float = NOW) -> Job:
    (job,) = load_history(root, now=now).jobs
    return job


def test_build_ids_sort_naturally_newest_first(tmp_path: Path) -> None:
    for build in ("9", "10", "100"):
        (tmp_path / "job" / build).mkdir(parents=True)
        (tmp_path / "job" / build / "started.json").write_text(json.dumps({"timestamp": START}))
    assert [build.id for build in only_job(tmp_path).builds] == ["100", "10", "9"]
    assert sorted(["b10", "b9", "a"], key=natural_key) == ["a", "b9", "b10"]


def test_metadata_names_dashboard_tab_and_release_blocking(tmp_path: Path) -> None:
    meta = {"dashboard": "sig-windows-signal", "tab": "windows-main", "release-blocking": True}
    write_job(tmp_path, "ci-a", {"t": "PP"}, metadata=meta)
    write_job(tmp_path, "ci-b", {"t": "PP"})
    a, b = sorted(load_history(tmp_path, now=NOW).jobs, key=lambda job: job.name)
    assert (a.dashboard, a.tab, a.release_blocking) == ("sig-windows-signal", "windows-main", True)
    assert (b.dashboard, b.tab, b.release_blocking) == ("default", "ci-b", False)


def test_rows_take_their_facts_from_properties_or_from_bracketed_tags(tmp_path: Path) -> None:
    props = {"ours": {"tags": "Serial, Feature:Windows", "tier": "adapted", "category": "Core.Pods"}}
    write_job(
        tmp_path,
        "job",
        {"ours": "P", "[sig-node] upstream [Conformance] [NodeConformance]": "P"},
        properties=props,
    )
    rows = only_job(tmp_path).rows
    assert rows["ours"].tags == ("Serial", "Feature:Windows")
    assert (rows["ours"].tier, rows["ours"].category) == ("adapted", "Core.Pods")
    assert rows["[sig-node] upstream [Conformance] [NodeConformance]"].tags == (
        "sig-node",
        "Conformance",
        "NodeConformance",
    )


def test_a_finished_build_passes_or_fails_by_finished_json(tmp_path: Path) -> None:
    write_job(tmp_path, "job", {"t": "FP"})
    failed, passed = only_job(tmp_path).builds
    assert failed.overall.status is Status.FAIL
    assert passed.overall.status is Status.PASS


def test_a_build_without_finished_json_runs_for_24_hours_then_fails(tmp_path: Path) -> None:
    write_job(tmp_path, "job", {"t": "P"})
    (build,) = only_job(tmp_path).builds
    (tmp_path / "job" / build.id / "finished.json").unlink()
    running = only_job(tmp_path, now=START + 3600).builds[0].overall
    assert (running.status, running.icon) == (Status.RUNNING, "R")
    late = only_job(tmp_path, now=START + 25 * 3600).builds[0].overall
    assert (late.status, late.icon, late.message) == (
        Status.FAIL,
        "T",
        "Build did not complete within 24 hours",
    )


@pytest.mark.parametrize(
    ("file", "content", "problem"),
    [
        ("started.json", "{not json", "started.json"),
        ("finished.json", "[1, 2]", "finished.json: not a JSON object"),
        (
            "finished.json",
            '{"timestamp": "yesterday", "passed": true}',
            "finished.json: timestamp is not a time in seconds",
        ),
        ("started.json", '{"timestamp": Infinity}', "started.json: Infinity is not JSON"),
        ("started.json", '{"timestamp": 1e300}', "started.json: timestamp is not a time in seconds"),
        ("started.json", '{"metadata": ' + "[" * 5000 + "]" * 5000 + "}", "started.json: nested too deeply"),
        ("artifacts/junit_02.xml", "<testsuites><testcase", "junit_02.xml"),
        ("artifacts/junit_02.xml", '<?xml version="1.0" encoding="bogus-enc"?><testsuites/>', "junit_02.xml"),
        ("artifacts/junit_02.xml", '<!DOCTYPE t [<!ENTITY a "b">]><testsuites>&a;</testsuites>',
         "junit_02.xml: has a DOCTYPE or ENTITY declaration"),
    ],
)
def test_malformed_artifacts_fail_the_build_with_an_e(
    tmp_path: Path, file: str, content: str, problem: str
) -> None:
    write_job(tmp_path, "job", {"t": "P"})
    (build,) = only_job(tmp_path).builds
    (tmp_path / "job" / build.id / file).write_text(content)
    overall = only_job(tmp_path).builds[0].overall
    assert (overall.status, overall.icon) == (Status.FAIL, "E")
    assert overall.message.startswith("Malformed artifacts: ")
    assert problem in overall.message


def test_finished_json_without_passed_falls_back_to_result_with_an_e(tmp_path: Path) -> None:
    write_job(tmp_path, "job", {"t": "P"})
    (build,) = only_job(tmp_path).builds
    (tmp_path / "job" / build.id / "finished.json").write_text(
        json.dumps({"timestamp": START, "result": "SUCCESS"})
    )
    overall = only_job(tmp_path).builds[0].overall
    assert (overall.status, overall.icon, overall.message) == (
        Status.PASS,
        "E",
        'finished.json missing "passed": true',
    )


def test_a_failed_build_without_failing_tests_says_so(tmp_path: Path) -> None:
    write_job(tmp_path, "job", {"t": "P"})
    (build,) = only_job(tmp_path).builds
    finished = {"timestamp": START + 60, "passed": False, "result": "FAILURE"}
    (tmp_path / "job" / build.id / "finished.json").write_text(json.dumps(finished))
    overall = only_job(tmp_path).builds[0].overall
    assert (overall.status, overall.message) == (Status.FAIL, "Build failed outside of test results")


def test_an_interrupted_build_shows_its_reason(tmp_path: Path) -> None:
    write_build(tmp_path / "job", START, {"t": "F"}, metadata={"interrupted": "SIGTERM from the CI"})
    overall = only_job(tmp_path).builds[0].overall
    assert overall.message == "interrupted: SIGTERM from the CI"


def test_retried_attempts_in_two_junit_files_merge_into_one_flaky_cell(tmp_path: Path) -> None:
    write_job(tmp_path, "job", {"t": "F"})
    (build,) = only_job(tmp_path).builds
    artifacts = tmp_path / "job" / build.id / "artifacts"
    (artifacts / "junit_02.xml").write_text('<testsuite><testcase name="[It] t"/></testsuite>')
    cell = only_job(tmp_path).builds[0].cells["t"]
    assert (cell.status, cell.icon) == (Status.FLAKY, "1/2")


def test_a_job_directory_given_as_root_is_read_as_that_job(tmp_path: Path) -> None:
    write_job(tmp_path, "ci-x", {"t": "PP"})
    (job,) = load_history(tmp_path / "ci-x", now=NOW).jobs
    assert job.name == "ci-x"
    assert len(job.builds) == 2


def test_the_output_directory_and_non_build_directories_are_not_jobs(tmp_path: Path) -> None:
    write_job(tmp_path, "ci-x", {"t": "P"})
    (tmp_path / "report" / "jobs").mkdir(parents=True)
    (tmp_path / "notes").mkdir()
    assert [job.name for job in load_history(tmp_path, now=NOW, skip=tmp_path / "report").jobs] == ["ci-x"]


def test_max_builds_keeps_the_newest(tmp_path: Path) -> None:
    ids = write_job(tmp_path, "job", {"t": "PFP"})
    (job,) = load_history(tmp_path, now=NOW, max_builds=2).jobs
    assert [build.id for build in job.builds] == ids[:2]


def test_excluded_tests_are_remembered_per_build(tmp_path: Path) -> None:
    write_job(tmp_path, "job", {"t": "XP"})
    new, old = only_job(tmp_path).builds
    assert new.excluded == {"t": "known not to work on Windows"}
    assert old.excluded == {}


def test_worker_processes_read_the_same_job_as_one(tmp_path: Path) -> None:
    for age, codes in enumerate(("P_", "FP", "KS", "SP", "XF", "PP", "FF")):
        properties = {"a": {"tier": f"tier of build {age}"}}
        write_build(
            tmp_path / "job", START - 3600 * age, dict(zip("ab", codes, strict=True)), properties=properties
        )
    serial = read_job(tmp_path / "job", now=NOW, workers=1)
    parallel = read_job(tmp_path / "job", now=NOW, workers=3)
    assert len(parallel.builds) == 7
    assert parallel == serial
    assert parallel.rows["a"].tier == "tier of build 0"  # the newest build's facts win
