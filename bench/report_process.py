"""One report measured in a process of its own, as `winsuite report` makes one: a report's time depends on the
process it runs in (a fork copies the process's page tables, and a process that made a cold report of half a
million testcases before holds hundreds of megabytes), so each report a bench times starts from a fresh interpreter.
Its start and imports are not counted: the timer starts where `winsuite report` starts reading the results."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

_REPORT = """
import json, os, sys, time
from pathlib import Path
from winsuite_reports.analysis import ReportOptions, build_report
from winsuite_reports.render import write_dashboard
from winsuite_reports.results import load_history

def cpu():
    times = os.times()  # this process's and its ended children's (a forked page writer's)
    return times.user + times.system + times.children_user + times.children_system

results, output, cache, now = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "cache", float(sys.argv[4])
began, used = time.perf_counter(), cpu()
history = load_history(results, now=now, cache=cache)
loaded = time.perf_counter()
report = build_report(history, ReportOptions(), now=now)
analysed = time.perf_counter()
write_dashboard(report, output)
print(json.dumps([loaded - began, analysed - loaded, time.perf_counter() - analysed, cpu() - used]))
"""


@dataclass(frozen=True)
class ReportTiming:
    """Seconds to load, analyse and render, and the CPU seconds of all three."""

    load: float
    analysis: float
    render: float
    cpu: float

    @property
    def total(self) -> float:
        return self.load + self.analysis + self.render


def measured(results: Path, output: Path, *, cache: bool, now: float) -> ReportTiming:
    """The report of `results` into `output`, made and timed by a fresh process."""
    done = subprocess.run([sys.executable, "-c", _REPORT, str(results), str(output), "cache" if cache else "-",
                           repr(now)], capture_output=True, text=True, check=True)
    load, analysis, render, cpu = json.loads(done.stdout.splitlines()[-1])
    return ReportTiming(load, analysis, render, cpu)
