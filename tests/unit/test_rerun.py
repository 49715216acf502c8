"""--rerun-failed: which tests of a stored build run again, and with which settings (no cluster needed)."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest

from winsuite.errors import UsageError
from winsuite.inputs.regex import compile_re2
from winsuite.inputs.regex import quote_meta
from winsuite.policy.run_config import RUN_FILE
from winsuite.policy.run_config import Output
from winsuite.policy.run_config import RunConfig
from winsuite.policy.run_config import resolve_run
from winsuite.policy.selection import Selector
from winsuite.policy.selection import exact_focus
from winsuite.run.request import resolve_request
from winsuite.run.rerun import find_build
from winsuite.run.rerun import load_rerun

FAILED = '[sig-testing] winsuite runner fails with <b>markup</b> & "quotes" in its name'
FLAKY = "[sig-testing] winsuite runner flakes: fails on the first attempt and passes on the next"
INTERRUPTED = "[sig-apps] Job should run a job to completion (a+b)*? [Slow]"
PASSED = "[sig-testing] winsuite runner passes when the API server answers"
SKIPPED = "[sig-testing] winsuite runner skips when the cluster lacks what it needs"


def junit_case(name: str, body: str = "", **properties: str) -> str:
    props = "".join(f"<property name={quoteattr(k)} value={quoteattr(v)}/>" for k, v in properties.items())
    return (f"<testcase name={quoteattr('[It] ' + name)} classname=\"e2e\">{body}"
            f"{'<properties>' + props + '</properties>' if props else ''}</testcase>")


JUNIT = "".join([
    '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="Kubernetes e2e suite" tests="6">',
    junit_case(FAILED, '<failure message="deliberate">boom</failure>'),
    junit_case(FLAKY, '<failure message="first attempt fails on purpose">x</failure>', attempt="1"),
    junit_case(FLAKY, attempt="2"),
    junit_case(INTERRUPTED, '<skipped message="interrupted by SIGTERM"/>', interrupted="true"),
    junit_case(PASSED),
    junit_case(SKIPPED, '<skipped message="requires a Windows kernel"/>'),
    "</testsuite></testsuites>",
])
RECORDED = {"node_os": "linux", "engine": "native", "flake_attempts": 2, "parallelism": 3}


def stored_run() -> RunConfig:
    """The run a build recorded (artifacts/run.json), as `winsuite run` writes it."""
    run = resolve_run(None, RECORDED, environ={}, run_id="20261124100000-abcd")
    return dataclasses.replace(run, cases="tests.runner_cases")


def build(root: Path, job: str = "", build_id: str = "20261124100000", with_run: bool = True) -> Path:
    run = stored_run()
    path = root / (job or run.job.name) / build_id
    (path / "artifacts").mkdir(parents=True)
    (path / "started.json").write_text(json.dumps({"timestamp": 1795500000, "metadata": {"job": run.job.name}}))
    if with_run:
        dataclasses.replace(run, output=Output(path, build_id, path.parent)).save(path / "artifacts" / RUN_FILE)
    (path / "finished.json").write_text(json.dumps({"timestamp": 1795500100, "passed": False, "result": "FAILURE"}))
    (path / "artifacts" / "junit_01.xml").write_text(JUNIT)
    return path


def namespace(**given: object) -> argparse.Namespace:
    defaults = {"winsuite_focus": None, "winsuite_job": None, "winsuite_node_os": None, "winsuite_engine": None,
                "winsuite_flake_attempts": None, "parallelism": None, "cases": "winsuite.cases",
                "results_root": "_artifacts", "artifacts": None}
    return argparse.Namespace(**{**defaults, **given})


def test_failed_flaky_and_interrupted_tests_are_rerun_and_nothing_else(tmp_path: Path) -> None:
    rerun = load_rerun(str(build(tmp_path)), tmp_path)
    assert rerun.names == sorted([FAILED, FLAKY, INTERRUPTED])


def test_the_narrowing_selects_exactly_those_names_as_ginkgo_matches_them(tmp_path: Path) -> None:
    rerun = load_rerun(str(build(tmp_path)), tmp_path)
    selector = resolve_request(namespace(), rerun).policy.selector
    assert all(selector.selects(name) for name in rerun.names)
    assert not selector.selects(PASSED) and not selector.selects(SKIPPED)
    assert not selector.selects(FLAKY + " [Serial]") and not selector.selects("x " + FAILED)


@pytest.mark.parametrize("text", ["a.b", "(a+b)*?", "[Slow] x{2}|y", "^$\\", "a b\\c", "<b>&\"</b>"])
def test_quote_meta_matches_the_text_literally(text: str) -> None:
    assert quote_meta("a.b") == "a\\.b"
    assert compile_re2(f"^{quote_meta(text)}$").search(text)
    assert Selector((exact_focus([text]),)).selects(text)
    assert not Selector((exact_focus([text]),)).selects(text + "!")


def test_a_build_id_is_found_under_the_results_root(tmp_path: Path) -> None:
    path = build(tmp_path)
    assert find_build("20261124100000", tmp_path) == path
    with pytest.raises(UsageError, match="no build directory"):
        find_build("20990101000000", tmp_path)


def test_an_id_of_several_jobs_asks_for_the_directory(tmp_path: Path) -> None:
    build(tmp_path, "one")
    build(tmp_path, "two")
    with pytest.raises(UsageError, match="several jobs"):
        find_build("20261124100000", tmp_path)


def test_the_recorded_run_is_what_the_command_line_leaves_out(tmp_path: Path) -> None:
    rerun = load_rerun(str(build(tmp_path)), tmp_path)
    run = resolve_request(namespace(winsuite_node_os="windows"), rerun)
    assert run.job.node_os == "windows"  # given: wins
    assert (run.job.engine, run.job.flake_attempts, run.job.parallelism) == ("native", 2, 3)
    assert run.cases == "tests.runner_cases"
    assert run.narrowing is not None and list(run.narrowing.names) == rerun.names
    assert run.run_id != rerun.run.run_id
    assert run.layout.job_dir == rerun.build_dir.parent  # the new build goes next to the one it reruns
    assert run.metadata["rerun-of"] == "20261124100000"


def test_a_focus_of_its_own_is_refused(tmp_path: Path) -> None:
    rerun = load_rerun(str(build(tmp_path)), tmp_path)
    with pytest.raises(UsageError, match="leave out --focus"):
        resolve_request(namespace(winsuite_focus=["x"]), rerun)


def test_a_build_without_its_run_document_is_refused_saying_so(tmp_path: Path) -> None:
    rerun = load_rerun(str(build(tmp_path, with_run=False)), tmp_path)
    with pytest.raises(UsageError, match=r"has no artifacts/run\.json"):
        resolve_request(namespace(), rerun)


def test_the_new_build_names_the_build_it_reran(tmp_path: Path) -> None:
    path = build(tmp_path)
    entries = load_rerun(str(path), tmp_path).metadata_entries()
    assert entries == {"rerun-of": "20261124100000", "rerun-of-dir": str(path.resolve()), "rerun-tests": 3}
