"""Per-test timeouts that say where (plugin/timeouts.py, authoring/steps.py): the message names the step and the
innermost line of the test's own code, the details hold the test's stack, and the row and its evidence carry both."""

from __future__ import annotations

import os
import sys
import xml.etree.ElementTree as ET

import pytest
from kubernetes import client

from winsuite.authoring import steps
from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.steps import Step
from winsuite.authoring.steps import step
from winsuite.plugin.timeouts import STACK_LIMIT
from winsuite.plugin.timeouts import Frame
from winsuite.plugin.timeouts import shown_path
from winsuite.plugin.timeouts import stack_of
from winsuite.plugin.timeouts import timeout_message
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.run.evidence import Evidence
from winsuite.run.observations import Observer
from winsuite_reports.conventions import FailureClass
from winsuite_reports.conventions import RowProperties

pytest_plugins = ["pytester"]

STUCK = [Frame("winsuite/cases/adapted/test_services.py", 53, "test_basic_endpoint", own=True,
               source="prober.check_service_reachability(svc)"),
         Frame("winsuite/k8s/connectivity.py", 229, "wait_reachable"),
         Frame("winsuite/k8s/api_websocket.py", 101, "frames"),
         Frame("websocket/_socket.py", 118, "recv")]


def test_the_first_line_names_the_budget_the_step_and_the_innermost_line_of_the_tests_own_code() -> None:
    message = timeout_message(600, Step("Checking if the Service forwards traffic to pod1"), STUCK)
    assert message.splitlines()[0] == (
        'timed out after 600s (per-test timeout) in step "Checking if the Service forwards traffic to pod1" at '
        "winsuite/cases/adapted/test_services.py:53 in test_basic_endpoint")


def test_the_lines_after_it_hold_the_steps_runtime_and_the_stack_marking_the_tests_own_frames() -> None:
    lines = timeout_message(600, Step("creating service x", started=0.0), STUCK).splitlines()
    assert lines[1].startswith("At [By Step] creating service x (Step Runtime: ")
    assert lines[2:] == [
        "Test stack, innermost last (> the test's own code):",
        "> winsuite/cases/adapted/test_services.py:53 in test_basic_endpoint",
        "      prober.check_service_reachability(svc)",
        "  winsuite/k8s/connectivity.py:229 in wait_reachable",
        "  winsuite/k8s/api_websocket.py:101 in frames",
        "  websocket/_socket.py:118 in recv"]


def test_without_a_step_or_a_frame_of_its_own_the_message_says_only_what_it_knows() -> None:
    assert timeout_message(20, None, STUCK).splitlines()[0] == (
        "timed out after 20s (per-test timeout) at winsuite/cases/adapted/test_services.py:53 in test_basic_endpoint")
    assert timeout_message(20, None, STUCK[1:]).splitlines()[0] == "timed out after 20s (per-test timeout)"


def test_a_deep_stack_keeps_its_outermost_and_innermost_frames() -> None:
    deep = [Frame(f"lib/f{i}.py", i, f"f{i}", own=i == 0) for i in range(STACK_LIMIT + 10)]
    lines = timeout_message(20, None, deep).splitlines()
    assert lines[2] == "> lib/f0.py:0 in f0" and lines[-1] == f"  lib/f{STACK_LIMIT + 9}.py:{STACK_LIMIT + 9} in " \
                                                                f"f{STACK_LIMIT + 9}"
    assert "  … 10 more frames" in lines and len(lines) == 2 + STACK_LIMIT + 1


def test_a_file_is_shown_as_its_import_reads() -> None:
    roots = [f"{os.sep}repo", f"{os.sep}repo{os.sep}suite"]
    assert shown_path(f"{os.sep}repo{os.sep}suite{os.sep}winsuite{os.sep}cases{os.sep}t.py", roots) == \
        os.path.join("winsuite", "cases", "t.py")
    assert shown_path(f"{os.sep}elsewhere{os.sep}t.py", roots) == f"{os.sep}elsewhere{os.sep}t.py"


def _stuck_here() -> list[Frame]:
    return stack_of(sys._getframe(), lambda path: path == __file__)


def test_the_stack_starts_at_the_outermost_frame_of_the_tests_own_code() -> None:
    stack = _stuck_here()
    assert [f.function for f in stack] == [
        "test_the_stack_starts_at_the_outermost_frame_of_the_tests_own_code", "_stuck_here"]
    assert all(f.own and f.path.endswith("test_timeouts.py") for f in stack)
    assert stack[0].source == "stack = _stuck_here()"


def test_a_step_lasts_until_the_next_or_until_its_block_ends() -> None:
    steps.clear()
    assert steps.current() is None
    step("first")
    with step("inside a block"):
        assert (current := steps.current()) is not None and current.text == "inside a block"
    assert (current := steps.current()) is not None and current.text == "first"
    step("second")
    assert (current := steps.current()) is not None and current.text == "second"
    steps.clear()
    assert steps.current() is None


def test_the_evidence_of_a_cut_off_row_says_where_the_test_was() -> None:
    facts = ClusterFacts(server="https://127.0.0.1:6443", server_version="v1.36.3", nodes=[], cluster_dns=True,
                         metrics_api=False, runtime_classes=[], egress_allowed=False, warnings=[])
    message = ('winsuite.plugin.timeouts.TestTimedOut: timed out after 600s (per-test timeout) in step "Checking if '
               'the Service forwards traffic to pod1" at winsuite/cases/adapted/test_services.py:53 in '
               "test_basic_endpoint")
    row = Attempt("[sig-network] Services should serve a basic endpoint from pods", "t::a", Outcome.FAILED,
                  duration=600.0, message=message, namespaces=(), properties=RowProperties(timed_out=True))
    judged = Evidence(Observer(client.ApiClient()), facts, "linux").judge(row)
    assert judged.properties.failure_class == FailureClass.TIMEOUT
    assert judged.properties.failure_evidence == (
        'the per-test timeout cut it off in step "Checking if the Service forwards traffic to pod1" at '
        "winsuite/cases/adapted/test_services.py:53 in test_basic_endpoint")
    upstream = Attempt("[sig-node] x", "t::b", Outcome.FAILED, duration=90.0,
                       message="timed out after 90s (per-test timeout)", properties=RowProperties(timed_out=True))
    assert Evidence(Observer(client.ApiClient()), facts, "linux").judge(upstream).properties.failure_evidence == \
        "the per-test timeout cut it off"


CUT_OFF = '''
import time

from winsuite.authoring.naming import Area, Describe
from winsuite.authoring.steps import step

group = Describe(Area("sig-testing"), "timeouts")

def wait_forever():
    try:
        time.sleep(30)
    except Exception:  # what client libraries do around their I/O: the timeout is not theirs to swallow
        pass

@group.it("is cut off in a step")
def test_cut_off():
    step("creating nothing")
    step("waiting for the sky to fall")
    wait_forever()
'''


def test_a_cut_off_row_names_its_step_and_line_and_its_details_hold_the_stack(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_cut=CUT_OFF)
    results = pytester.path / "artifacts"
    result = pytester.runpytest_subprocess("--node-os", "linux", "--results-dir", str(results), "--test-timeout",
                                           "1s")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    (case,) = ET.parse(results / "junit_01.xml").getroot().iter("testcase")
    failure = case.find("failure")
    assert failure is not None
    message, details = failure.get("message", ""), failure.text or ""
    lines = (pytester.path / "test_cut.py").read_text().splitlines()
    call, sleep = (1 + lines.index(f"    {code}") for code in ("wait_forever()", "    time.sleep(30)"))
    assert message.endswith('timed out after 1s (per-test timeout) in step "waiting for the sky to fall" at '
                            f"test_cut.py:{sleep} in wait_forever"), message
    assert "At [By Step] waiting for the sky to fall (Step Runtime: 1s)" in details, details
    # pytest shows the exception's lines after "E" and an indent.
    stack = [line.removeprefix("E").strip() for line in details[details.index("Test stack"):].splitlines()]
    assert stack[1:5] == [f"> test_cut.py:{call} in test_cut_off", "wait_forever()",
                          f"> test_cut.py:{sleep} in wait_forever", "time.sleep(30)"], details
