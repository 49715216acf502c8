"""The plugin through pytest's front door (pytester): names, markers, selection, results, flakes, timeouts."""

from __future__ import annotations

import dataclasses
import json
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from winsuite.policy.run_config import Output
from winsuite.policy.run_config import resolve_run

pytest_plugins = ["pytester"]

CASES = '''
from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area, Describe, Feature, LinuxOnly, Serial
import time

group = Describe(Area("sig-testing"), "plugin", Feature("Windows"))
ATTEMPTS = []

@group.it("passes")
def test_passes(): pass

@group.it("fails with <b>markup</b>")
def test_fails(): assert 1 == 2, "deliberate <failure> & markup"

@group.it("flakes once")
def test_flakes():
    ATTEMPTS.append(1)
    assert len(ATTEMPTS) > 1

@group.it("runs alone", Serial)
def test_serial(): pass

@group.it("uses Linux-only features", LinuxOnly)
def test_linux_only(): pass

@group.it("sleeps past its timeout")
def test_sleeps(): time.sleep(30)

@group.it_each("accepts {entry}", argname="signal", entries={"SIGTERM": 15, "SIGKILL": 9})
def test_table(signal): assert signal in (9, 15)
'''


@pytest.fixture
def cases(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_cases=CASES)
    return pytester


def names(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line]


def test_tags_become_markers(cases: pytest.Pytester) -> None:
    result = cases.runpytest_subprocess("-m", "not serial and feature_windows", "--collect-only", "-q")
    collected = names(result)
    assert not any("test_serial" in n for n in collected)
    assert any("test_passes" in n for n in collected) and any("test_table[SIGTERM]" in n for n in collected)


def test_unknown_tags_and_duplicate_names_are_reported_together(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bad='''
from winsuite.authoring.naming import Area, Describe, Tag
g = Describe(Area("sig-testing"), "bad")
@g.it("one", Tag("Seriall"))
def test_a(): pass
@g.it("same")
def test_b(): pass
@g.it("same")
def test_c(): pass
''')
    result = pytester.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stderr.str()
    assert "2 problem(s) with test names and tags" in text
    assert "test_bad.py:3: unknown tag [Seriall]" in text  # the location of the declaration
    assert "test_bad.py:5: duplicate full name '[sig-testing] bad same', declared at" in text
    assert "test_bad.py:7" in text


def test_linux_only_is_skipped_for_windows_with_its_reason(cases: pytest.Pytester) -> None:
    result = cases.runpytest_subprocess("-k", "linux_only", "--node-os", "windows", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*[[]LinuxOnly[]]: uses Linux-only features and the target OS is windows*"])
    cases.runpytest_subprocess("-k", "linux_only", "--node-os", "linux").assert_outcomes(passed=1)


def test_focus_and_skip_select_by_full_name(cases: pytest.Pytester) -> None:
    result = cases.runpytest_subprocess("--focus", r"plugin \[Feature:Windows\] (passes|accepts)",
                                        "--skip", "SIGKILL", "--node-os", "linux")
    result.assert_outcomes(passed=2, deselected=6)


def test_exclusions_are_skipped_with_reason_and_issue(cases: pytest.Pytester) -> None:
    exclusions = cases.path / "exclusions.yaml"
    exclusions.write_text(
        "apiVersion: winsuite.io/v1alpha1\nkind: ExclusionList\nexclusions:\n"
        "- {pattern: 'plugin .* passes', reason: known to break, issue: 'https://example.invalid/1'}\n")
    result = cases.runpytest_subprocess("-k", "passes", "--exclusions", str(exclusions), "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*excluded: known to break (https://example.invalid/1)*"])


def junit_rows(path: Path) -> list[tuple[str, str, str, dict[str, str]]]:
    found = []
    for case in ET.parse(path).getroot().iter("testcase"):
        element = case.find("failure") if case.find("failure") is not None else case.find("skipped")
        status = "passed" if element is None else element.tag
        props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        found.append((case.get("name", ""), status, "" if element is None else element.get("message", ""), props))
    return found


def test_results_flakes_and_timeouts_in_junit(cases: pytest.Pytester) -> None:
    results = cases.path / "artifacts"
    result = cases.runpytest_subprocess("--node-os", "linux", "--results-dir", str(results), "--flake-attempts", "2",
                                        "--test-timeout", "2s", "-k", "not serial")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    rows = junit_rows(results / "junit_01.xml")
    by_name: dict[str, list[tuple[str, str, dict[str, str]]]] = {}
    for name, status, message, props in rows:
        by_name.setdefault(name, []).append((status, message, props))
    prefix = "[It] [sig-testing] plugin [Feature:Windows] "
    assert [s for s, _, _ in by_name[prefix + "flakes once"]] == ["failure", "passed"]
    failing = by_name[prefix + "fails with <b>markup</b>"]
    assert failing[0][1] == "AssertionError: deliberate <failure> & markup"
    assert [p["attempt"] for _, _, p in failing] == ["1", "2"]
    sleeper = by_name[prefix + "sleeps past its timeout"][-1]
    assert sleeper[0] == "failure" and "timed out after 2s" in sleeper[1] and sleeper[2]["timed-out"] == "true"
    assert by_name[prefix + "accepts SIGTERM"][0][0] == "passed"
    assert by_name[prefix + "passes"][0][2]["tags"] == "sig-testing,Feature:Windows"
    result.stdout.fnmatch_lines(["*rerun*"])  # a retried failure is not counted as a failure by pytest


def test_sigterm_still_writes_valid_results_with_the_interrupted_test(cases: pytest.Pytester) -> None:
    results = cases.path / "artifacts"
    process = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--node-os", "linux",
                                "--results-dir", str(results), "-k", "passes or sleeps"], cwd=cases.path,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    events = results / "winsuite-events_01.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "test_sleeps" not in (events.read_text() if events.exists() else ""):
        time.sleep(0.1)  # polling a file another process appends to
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=60)
    rows = {name.split("[Feature:Windows] ")[1]: (status, message, props) for name, status, message, props
            in junit_rows(results / "junit_01.xml")}
    assert rows["passes"][0] == "passed"
    status, message, props = rows["sleeps past its timeout"]
    assert status == "failure" and message.startswith("interrupted") and props["interrupted"] == "true"


def test_sigterm_during_a_tests_setup_still_writes_its_row_interrupted(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_slow_setup='''
import time
import pytest
from winsuite.authoring.naming import Area, Describe

group = Describe(Area("sig-testing"), "plugin")

@pytest.fixture
def slow():
    time.sleep(30)

@group.it("is cut off in its setup")
def test_cut(slow): pass
''')
    results = pytester.path / "artifacts"
    process = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--node-os", "linux",
                                "--results-dir", str(results)], cwd=pytester.path,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    events = results / "winsuite-events_01.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "test_cut" not in (events.read_text() if events.exists() else ""):
        time.sleep(0.1)  # polling a file another process appends to
    time.sleep(1)  # well inside the fixture's sleep: no phase of the test has reported
    began = time.time()
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=60)
    (row,) = [(status, message, props) for name, status, message, props in junit_rows(results / "junit_01.xml")
              if name.endswith("is cut off in its setup")]
    status, message, props = row
    assert status == "failure" and message.startswith("interrupted") and props["interrupted"] == "true"
    record = [json.loads(line) for line in events.read_text().splitlines() if '"attempt"' in line][-1]["result"]
    assert record["duration"] >= 1 and record["started"] <= began - 1  # it lasted from its start until the signal


def test_an_excluded_test_keeps_its_exclusion_reason_over_missing_capabilities(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_needs='''
from winsuite.authoring.capabilities import Capability
from winsuite.authoring.naming import Area, Describe, LinuxOnly
g = Describe(Area("sig-testing"), "needs")
@g.it("a Windows kernel", LinuxOnly, needs=[Capability.WINDOWS_KERNEL])
def test_needs(): pass
''')
    result = pytester.runpytest_subprocess("--node-os", "windows", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*[[]LinuxOnly[]]: uses Linux-only features*"])


def test_a_plugin_hears_of_every_recorded_attempt_through_pytest_winsuite_result(cases: pytest.Pytester) -> None:
    cases.makeconftest('''
import json
def pytest_winsuite_result(config, result):
    with open("heard.jsonl", "a") as out:
        out.write(json.dumps([result["name"], result["outcome"], result["attempt"]]) + "\\n")
''')
    results = cases.path / "artifacts"
    cases.runpytest_subprocess("--node-os", "linux", "--results-dir", str(results), "--flake-attempts", "2",
                               "-k", "passes or flakes")
    heard = [json.loads(line) for line in (cases.path / "heard.jsonl").read_text().splitlines()]
    prefix = "[sig-testing] plugin [Feature:Windows] "
    assert sorted(heard) == [[prefix + "flakes once", "failed", 1], [prefix + "flakes once", "passed", 2],
                             [prefix + "passes", "passed", 1]]


def test_a_phase_of_winsuite_run_hands_its_rows_over_through_its_event_log_only(cases: pytest.Pytester) -> None:
    """Under `winsuite run` (--run-file) the run's build writes the rows: the phase writes no JUnit of its own."""
    build_dir = cases.path / "build"
    run = dataclasses.replace(resolve_run("embedded", {"node_os": "linux", "flake_attempts": 2}, environ={}),
                              output=Output(build_dir, "20261125000000"))
    run.save(build_dir / "artifacts" / "run.json")
    result = cases.runpytest_subprocess("--run-file", str(build_dir / "artifacts" / "run.json"), "--phase",
                                        "parallel", "-k", "passes or flakes")
    assert result.ret == pytest.ExitCode.OK
    assert sorted(p.name for p in (build_dir / "artifacts").iterdir()) == ["run.json", "winsuite-events_01.jsonl"]
    events = [json.loads(line) for line in (build_dir / "artifacts" / "winsuite-events_01.jsonl").read_text()
              .splitlines()]
    recorded = [(e["result"]["name"].split("] ")[-1], e["result"]["outcome"], e["final"]) for e in events
                if e["event"] == "attempt"]
    assert sorted(recorded) == [("flakes once", "failed", False), ("flakes once", "passed", True),
                                ("passes", "passed", True)]
