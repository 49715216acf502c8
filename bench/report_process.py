"""One report measured in a process of its own, as `winsuite report` makes one: a report's time depends on the
process it runs in (a fork copies the process's page tables, and a process that made a cold report of half a
million testcases before holds hundreds of megabytes), so each report a bench times starts from a fresh interpreter.
Its start and imports are not counted: the timer starts where `winsuite report` starts reading the results.

A report that a goal is set for is made several times, each from the same state of the results root and its cache,
and its median run is the figure: on a shared machine one run can take half as long again as the next one, CPU time
included (what runs beside it on the same cores), and a single run says more of the neighbours than of the report.
Every run's total is printed beside the median."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
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


@dataclass(frozen=True)
class RepeatedTiming:
    """The runs of one report, each made from the same state; the median run is its figure."""

    runs: list[ReportTiming]

    @property
    def median(self) -> ReportTiming:
        """The run of the median total (of an even number of runs, the slower of the middle two)."""
        ordered = sorted(self.runs, key=lambda run: run.total)
        return ordered[len(ordered) // 2]

    @property
    def spread(self) -> str:
        """Every run's total, fastest first, the median's in brackets: "median of 3 runs: 0.22 [0.25] 0.31 s"."""
        totals = sorted(run.total for run in self.runs)
        middle = len(totals) // 2  # as `median` picks it
        shown = " ".join(f"[{total:.2f}]" if i == middle else f"{total:.2f}" for i, total in enumerate(totals))
        return f"median of {len(totals)} runs: {shown} s"


def measured_runs(results: Path, output: Path, *, cache: bool, now: float, runs: int,
                  reset: Callable[[], None] = lambda: None) -> RepeatedTiming:
    """The report of `results` into `output`, made `runs` times by fresh processes; `reset` brings the root back to
    the state the first run met before each run (e.g. the cache file as it was)."""
    timings = []
    for _ in range(runs):
        reset()
        timings.append(measured(results, output, cache=cache, now=now))
    return RepeatedTiming(timings)


def run_count(text: str) -> int:
    """A --runs value: a whole number of runs, at least one (argparse names the option when it is not)."""
    count = int(text)  # ValueError: argparse says "invalid run_count value"
    if count < 1:
        raise argparse.ArgumentTypeError(f"{count}: a report is made at least once")
    return count
