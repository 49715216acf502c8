"""A results tree shaped like a bucket's history (two jobs, 200 builds, the odd builds a real bucket has), and the
checks the object-store tests share: the dashboard from the bucket against the one from the same tree on disk."""

from __future__ import annotations

import filecmp
import json
import random
import re
import signal
import subprocess
import time
import types
from collections.abc import Callable
from pathlib import Path

import pytest

from winsuite.cli import main
from winsuite.errors import ExitCode
from winsuite.run import dashboard
from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import STARTED
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_build
from winsuite_reports.synthetic import write_job

JOBS = {"ci-windows-2022": 120, "ci-windows-2025": 80}  # 200 builds
TESTS = 30
NOW = START + 400 * 3600  # the reports' clock: pages say when they were made
BUILD_URL = "https://results.example/<job>/<build>"  # one link template, so a bucket's and a disk's pages agree
SPLIT_JUNIT = ('<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="Kubernetes e2e suite">'
               '<testcase name="[It] [sig-windows] Serial phase test {n}" classname="Kubernetes e2e suite" '
               'time="1.0"></testcase></testsuite></testsuites>\n')


def write_history(root: Path, seed: int = 29) -> dict[str, list[str]]:
    """The jobs' builds (ids newest first) under root, including a build with a malformed started.json, one whose
    JUnit is not XML, one with no finished.json yet, and builds whose JUnit is split over several files."""
    rng = random.Random(seed)
    ids = {}
    for job, count in JOBS.items():
        rows = {f"[sig-windows] Area {i % 5} case {i} [Conformance]":
                "".join(rng.choices("PPPPPPPPFKS", k=count)) for i in range(TESTS)}
        metadata = {"kubernetes-version": "v1.36.3", "windows-builds": "10.0.20348.2582" if "2022" in job else
                    "10.0.26100.1742", "container-runtime-windows": "containerd://2.1.0"}
        ids[job] = write_job(root, job, rows, every=1800, metadata=metadata)
        for n, build in enumerate(ids[job][5:40:7]):  # JUnit split over several files
            for phase in (2, 3):
                (root / job / build / "artifacts" / f"junit_{phase:02d}.xml").write_text(SPLIT_JUNIT.format(n=n))
    first, second = (root / job for job in JOBS)
    (first / ids["ci-windows-2022"][10] / STARTED).write_text('{"timestamp": Infinity}')
    (second / ids["ci-windows-2025"][3] / "artifacts" / "junit_01.xml").write_text("not xml <")
    (first / ids["ci-windows-2022"][0] / FINISHED).unlink()  # still running
    return ids


def new_build(root: Path, job: str, ids: dict[str, list[str]]) -> str:
    """One more build of the job, 30 minutes after its newest."""
    newest = max(json.loads((root / job / b / STARTED).read_text())["timestamp"] for b in ids[job][:2])
    cells = {f"[sig-windows] Area {i % 5} case {i} [Conformance]": "P" for i in range(TESTS)}
    return write_build(root / job, newest + 1800, cells, metadata={"kubernetes-version": "v1.36.4"})


def report(results: list[str], output: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """`winsuite report` as a user runs it, with the reports' clock set to NOW."""
    monkeypatch.setattr(dashboard, "time", types.SimpleNamespace(time=lambda: NOW))
    argv = ["report", "--output", str(output), "--build-url", BUILD_URL]
    for location in results:
        argv += ["--results", location]
    return main(argv)


def differences(left: Path, right: Path) -> list[str]:
    """The files that differ between two dashboards (or that only one has)."""
    files = {p.relative_to(left) for p in left.rglob("*") if p.is_file()}
    other = {p.relative_to(right) for p in right.rglob("*") if p.is_file()}
    return sorted(str(f) for f in files ^ other) + sorted(
        str(f) for f in files & other if not filecmp.cmp(left / f, right / f, shallow=False))


def builds_shown(output: Path) -> dict[str, int]:
    """How many builds each tab's grid holds."""
    shown = {}
    for page in output.glob("jobs/*/grid.html"):
        text = page.read_text()
        data = json.loads(text.split('<script type="application/json" id="grid-data">')[1].split("</script>")[0])
        shown[page.parent.name] = len(data["builds"])
    return shown


def check_stopped_mid_report(returncode: int, err: str, output: Path, tree: Path) -> None:
    """A report of `tree`'s bucket whose store went away while it read the first job: exit 12, one error line naming
    the builds not read (five, and how many more) and the second job not listed; the builds read before render."""
    assert returncode == ExitCode.RESULTS_UNREACHABLE, err
    errors = [line for line in err.splitlines() if line.startswith("winsuite report: error:")]
    assert len(errors) == 1 and "the store could not be reached" in errors[0], err
    named = re.search(r"not read: (.*)$", errors[0])
    assert named is not None
    more = re.search(r"and (\d+) more", named.group(1))
    not_read = len(named.group(1).split(", ")) + (int(more.group(1)) if more else 0)
    shown = builds_shown(output)
    first = "ci-windows-2022"  # read first: the store goes during its builds; the second job is not listed
    builds = sum(1 for path in (tree / first).iterdir() if path.is_dir())
    assert 0 < shown.get(first, 0) < builds
    assert shown.get(first, 0) + not_read - 1 == builds, (shown, named.group(1))


def stop_store_mid_report(report: subprocess.Popen[str], partway: Callable[[], bool],
                          stop_store: Callable[[], None]) -> tuple[int, str]:
    """Stops the store once `partway()` says the report has read some of it, with the report frozen meanwhile (on a
    fast machine it could otherwise finish before the store is gone). The report's exit code and stderr."""
    deadline = time.monotonic() + 120
    while not partway() and report.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    report.send_signal(signal.SIGSTOP)
    try:
        stop_store()
    finally:
        report.send_signal(signal.SIGCONT)
    _, err = report.communicate(timeout=300)
    return report.returncode, err
