"""Writing two parts of a report at once (reports.split): each case runs in a process of its own, with no other
thread (the test session may have some, and then nothing is forked)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from winsuite_reports.split import available_cpus
from winsuite_reports.synthetic import write_job

pytestmark = pytest.mark.skipif(available_cpus() < 2 or sys.platform == "win32",
                                reason="a forked copy writes beside the process only with fork and a second CPU")

PARTS = """
import os, sys
from pathlib import Path
from winsuite_reports.split import both, can_fork
out, split, fail_in_copy = Path(sys.argv[1]), sys.argv[2] == "split", sys.argv[3] == "fail"
parent = os.getpid()
assert can_fork()

def first():
    if fail_in_copy and os.getpid() != parent:
        raise RuntimeError("the copy fails")
    (out / "first").write_text(str(os.getpid()))

def second():
    (out / "second").write_text(str(os.getpid()))

both(first, second, split=split)
print(parent)
"""


def run_parts(tmp_path: Path, split: bool, fail_in_copy: bool = False) -> tuple[str, str, str]:
    done = subprocess.run([sys.executable, "-c", PARTS, str(tmp_path), "split" if split else "serial",
                           "fail" if fail_in_copy else "-"], capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.strip(), (tmp_path / "first").read_text(), (tmp_path / "second").read_text()


def test_a_split_runs_the_first_part_in_a_copy_and_the_second_here(tmp_path: Path) -> None:
    parent, first, second = run_parts(tmp_path, split=True)
    assert second == parent and first != parent


def test_without_a_split_both_parts_run_here(tmp_path: Path) -> None:
    parent, first, second = run_parts(tmp_path, split=False)
    assert first == second == parent


def test_a_part_the_copy_failed_is_written_here(tmp_path: Path) -> None:
    parent, first, second = run_parts(tmp_path, split=True, fail_in_copy=True)
    assert first == second == parent


BESIDE = """
import os, sys
from winsuite_reports.split import Beside
split, fail_in_copy = sys.argv[1] == "split", sys.argv[2] == "fail"
parent = os.getpid()

def compute():
    if fail_in_copy and os.getpid() != parent:
        raise RuntimeError("the copy fails")
    return f"{os.getpid()}".encode() * 20_000  # more than a pipe holds: the copy waits to be read

with Beside(compute, split=split) as copy:
    found = copy.result()
print(parent, found[:len(found) // 20_000].decode(), len(found))
"""


def run_beside(split: bool, fail_in_copy: bool = False) -> tuple[str, str, int]:
    done = subprocess.run([sys.executable, "-c", BESIDE, "split" if split else "serial",
                           "fail" if fail_in_copy else "-"], capture_output=True, text=True, check=True, timeout=60)
    parent, computed_by, size = done.stdout.split()
    return parent, computed_by, int(size)


def test_bytes_computed_beside_come_from_a_copy_whole() -> None:
    parent, computed_by, size = run_beside(split=True)
    assert computed_by != parent and size == len(computed_by) * 20_000


def test_bytes_not_computed_beside_come_from_the_process() -> None:
    parent, computed_by, _ = run_beside(split=False)
    assert computed_by == parent


def test_bytes_the_copy_failed_to_compute_are_computed_here() -> None:
    parent, computed_by, size = run_beside(split=True, fail_in_copy=True)
    assert computed_by == parent and size == len(parent) * 20_000


LEFT_EARLY = """
import os, sys, time
from winsuite_reports.split import Beside
try:
    with Beside(lambda: time.sleep(60) or b"late", split=True) as copy:
        print(copy._child, flush=True)
        raise RuntimeError("the caller fails before asking")
except RuntimeError:
    pass
"""


def test_a_copy_whose_bytes_are_not_asked_for_is_stopped() -> None:
    done = subprocess.run([sys.executable, "-c", LEFT_EARLY], capture_output=True, text=True, check=True, timeout=30)
    child = int(done.stdout)
    with pytest.raises(ProcessLookupError):  # stopped and waited for: no such process any more
        os.kill(child, 0)


DASHBOARD = """
import sys
from pathlib import Path
from winsuite_reports import render
from winsuite_reports.analysis import ReportOptions, build_report
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import START
results, output = Path(sys.argv[1]), Path(sys.argv[2])
render.SPLIT_FROM_CELLS = 0 if sys.argv[3] == "split" else 1 << 62
report = build_report(load_history(results, now=START + 86400, cache=False), ReportOptions(), now=START + 86400)
render.write_dashboard(report, output)
"""


def test_a_dashboard_written_in_two_parts_is_the_one_written_in_one(tmp_path: Path) -> None:
    for job in ("ci-a", "ci-b"):
        write_job(tmp_path / "results", job, {"[sig-node] passes": "PPPP", "[sig-node] flakes": "PFKP",
                                              "[sig-windows] skips": "SSSS", "[sig-node] breaks": "FFPP"},
                  properties={"[sig-node] flakes": {"category": "Core.Pods"}})
    pages = {}
    for how in ("split", "serial"):
        subprocess.run([sys.executable, "-c", DASHBOARD, str(tmp_path / "results"), str(tmp_path / how), how],
                       check=True, timeout=120)
        pages[how] = {path.relative_to(tmp_path / how): path.read_bytes()
                      for path in sorted((tmp_path / how).rglob("*")) if path.is_file()}
    assert len(pages["split"]) >= 10 and pages["split"] == pages["serial"]
