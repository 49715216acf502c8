"""The dashboard of a real `winsuite run` on the embedded cluster: every JUnit testcase becomes a grid row."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.integration.runner_support import job_dirs

pytestmark = pytest.mark.cluster

WINSUITE = (sys.executable, "-m", "winsuite.cli")
BUILD = "20260101000000"


@pytest.fixture
def results(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """One build of the default (embedded) job, written by `winsuite run` on the session's cluster. The wait is that
    whole run: winsuite's catalog targeting Windows, each test run or skipped with its reason."""
    try:
        cluster = request.getfixturevalue("cluster")
    except pytest.FixtureLookupError:
        pytest.skip("needs the embedded cluster fixture (tests/integration/conftest.py)")
    root = tmp_path / "results"
    run = [*WINSUITE, "run", "--cluster-name", cluster.name, "--results-root", str(root)]
    # The exit code says whether tests failed; the report must show either outcome, so it is not asserted.
    subprocess.run([*run, "--build-id", BUILD], check=False, timeout=3600)
    return root


def junit_rows(build: Path) -> dict[str, str]:
    """Row name -> grid code, straight from the XML the way TestGrid reads it (attempts merged)."""
    outcomes: dict[str, set[str]] = {}
    for path in sorted(build.rglob("junit*.xml")):
        for case in ET.parse(path).getroot().iter("testcase"):
            skipped = case.find("skipped")
            if skipped is not None and skipped.get("message", "") in ("", "skipped") and not skipped.text:
                continue
            failed = case.find("failure") is not None or case.find("error") is not None
            outcome = "F" if failed else ("S" if skipped is not None else "P")
            outcomes.setdefault(case.get("name", "").removeprefix("[It] "), set()).add(outcome)
    return {
        name: ("K" if len(seen) > 1 else "F") if "F" in seen else ("S" if "S" in seen else "P")
        for name, seen in outcomes.items()
    }


def test_the_dashboard_shows_every_testcase_of_a_real_run(results: Path, tmp_path: Path) -> None:
    (job,) = job_dirs(results)
    build = job / BUILD
    finished = json.loads((build / "finished.json").read_text())
    expected = junit_rows(build)
    assert expected, f"winsuite run wrote no JUnit testcases under {build}"

    out = tmp_path / "dashboard"
    done = subprocess.run(
        [*WINSUITE, "report", "--results", str(results), "--output", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    grid = (out / "jobs" / job.name / "grid.html").read_text(encoding="utf-8")
    match = re.search(r'<script type="application/json" id="grid-data">(.*?)</script>', grid, re.S)
    assert match is not None
    data = json.loads(match.group(1))

    shown = {row[0]: data["codes"][row[5][0]] for row in data["rows"]}
    assert shown == expected
    overall = data["codes"][data["overall"][0]]
    assert overall == ("P" if finished["passed"] else "F")
    assert not [text for text in data["strings"] if text.startswith("Malformed artifacts")]
    (column,) = data["builds"]
    assert column["id"] == BUILD
    kubernetes = data["axes"].index("Kubernetes")  # the environment axis every grid has
    assert column["e"][kubernetes].startswith("v1.36")
    assert (out / "index.html").is_file()
    assert (out / "readiness.html").is_file()

    summary = subprocess.run(
        [*WINSUITE, "report", "--results", str(results), "--format", "markdown"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert summary.returncode == 0, summary.stderr
    assert summary.stdout.startswith("### Release readiness: ")
