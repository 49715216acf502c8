"""Timeouts that say where, on the embedded cluster (tests/evidence_cases/test_stuck_calls.py): a call to the cluster
that never returns ends by its poll's own budget, not by the per-test timeout; and a test the per-test timeout cuts
off names its step and its line in the row's message, its stack in the row's details, and both in evidence.txt."""

from __future__ import annotations

import dataclasses
import inspect
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.evidence_cases import test_stuck_calls as cases
from tests.integration.runner_support import only_build
from tests.integration.runner_support import start
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.errors import ExitCode

CASES = "tests.evidence_cases"
RUN_SECONDS = 900


@dataclasses.dataclass(frozen=True)
class Failed:
    message: str
    details: str
    seconds: float
    properties: dict[str, str]


def failed_row(root: Path, *extra: str, cluster: EmbeddedCluster) -> tuple[Failed, Path]:
    """Run the one case `extra` selects; its failed row (from the build's junit) and the build's directory."""
    process = start(cluster, root, "--node-os", "linux", "--flake-attempts", "1", *extra, cases=CASES)
    output, _ = process.communicate(timeout=RUN_SECONDS)
    assert process.returncode == ExitCode.TESTS_FAILED, output
    build = only_build(root).path
    (case,) = ET.parse(build / "artifacts" / "junit_01.xml").getroot().iter("testcase")  # one attempt
    failure = case.find("failure")
    assert failure is not None, output
    properties = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
    return Failed(failure.get("message", ""), failure.text or "", float(case.get("time") or 0), properties), build


def line_of(function: Callable[..., object], code: str) -> int:
    """The line number of the first line of `function` that holds `code`."""
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if code in line)


@pytest.mark.cluster
@pytest.mark.real_node
def test_an_exec_that_never_returns_ends_by_its_polls_budget_not_the_per_test_timeout(
        real_node: EmbeddedCluster, tmp_path: Path) -> None:
    row, _ = failed_row(tmp_path, "--focus", "gives up on an exec into a stopped server", "--test-timeout", "300s",
                        cluster=real_node)
    assert row.properties["failure-class"] == "test" and row.properties.get("timed-out") != "true", row
    budget = f"timed out after {cases.POLL_SECONDS:.0f}s waiting for the stopped server to answer"
    assert budget in row.message, row
    assert "did not finish within" in row.details and "wget" in row.details, row
    # The pod starts, the server answers, and then the poll's budget: far from the per-test timeout.
    assert row.seconds < 150, row


@pytest.mark.cluster
def test_a_test_cut_off_by_the_per_test_timeout_names_its_step_and_stack(cluster: EmbeddedCluster,
                                                                         tmp_path: Path) -> None:
    row, build = failed_row(tmp_path, "--focus", "is cut off by the per-test timeout", "--test-timeout", "15s",
                            cluster=cluster)
    where = f"evidence_cases/test_stuck_calls.py:{line_of(cases.test_cut_off_in_a_step, 'time.sleep')} in " \
            "test_cut_off_in_a_step"
    assert row.properties["failure-class"] == "timeout" and row.properties["timed-out"] == "true", row
    assert 'timed out after 15s (per-test timeout) in step "waiting for what never comes" at ' in row.message, row
    assert row.message.endswith(where), row
    assert "At [By Step] waiting for what never comes (Step Runtime: " in row.details, row
    stack = [line.removeprefix("E").strip() for line in row.details[row.details.index("Test stack"):].splitlines()]
    assert stack[1].startswith(">") and stack[1].endswith(where) and stack[2] == "time.sleep(NEVER)", row
    evidence = next(build.rglob("evidence.txt")).read_text()
    assert 'evidence: the per-test timeout cut it off in step "waiting for what never comes" at ' in evidence, \
        evidence
    assert where in evidence, evidence
