"""Reports measured in processes of their own, as `winsuite report` makes them.

Whole: `winsuite report` itself (`python -m winsuite.cli report --results R --output O`) timed from its launch to its
exit, interpreter start and imports included; this is the figure goals are set for. A report's time also depends on
the process it runs in (a fork copies the process's page tables, and a process that made a cold report of half a
million testcases before holds hundreds of megabytes), so every report starts from a fresh interpreter.

Split: the same work (load, analysis, render) done by a fresh interpreter with a fixed clock and the cache on or off,
each part timed from where `winsuite report` starts reading the results; information on where the whole goes, and
dashboards that can be compared byte for byte.

A report that a goal is set for is made several times, each from the same state of the results root and its cache,
and its median run is the figure: on a shared machine one run can take half as long again as the next one, CPU time
included (what runs beside it on the same cores), and a single run says more of the neighbours than of the report.
Every run is printed beside the median."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.measure import median
from bench.measure import spread
from bench.measure import user_env

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
    """The report of `results` into `output`, made and timed (split) by a fresh process."""
    done = subprocess.run([sys.executable, "-c", _REPORT, str(results), str(output), "cache" if cache else "-",
                           repr(now)], env=user_env(), capture_output=True, text=True, check=True)
    load, analysis, render, cpu = json.loads(done.stdout.splitlines()[-1])
    return ReportTiming(load, analysis, render, cpu)


@dataclass(frozen=True)
class RepeatedTiming:
    """The runs of one report, each made from the same state; the median run is its figure."""

    runs: list[ReportTiming]

    @property
    def median(self) -> ReportTiming:
        """The run of the median total (of an even number of runs, the slower of the middle two)."""
        middle = median([run.total for run in self.runs])
        return next(run for run in self.runs if run.total == middle)

    @property
    def spread(self) -> str:
        return spread([run.total for run in self.runs])


def measured_runs(results: Path, output: Path, *, cache: bool, now: float, runs: int,
                  reset: Callable[[], None] = lambda: None) -> RepeatedTiming:
    """The report of `results` into `output`, made `runs` times by fresh processes; `reset` brings the root back to
    the state the first run met before each run (e.g. the cache file as it was)."""
    timings = []
    for _ in range(runs):
        reset()
        timings.append(measured(results, output, cache=cache, now=now))
    return RepeatedTiming(timings)


def whole(results: Path, output: Path) -> float:
    """Seconds `winsuite report --results RESULTS --output OUTPUT` takes from its launch to its exit."""
    argv = [sys.executable, "-m", "winsuite.cli", "report", "--results", str(results), "--output", str(output)]
    began = time.perf_counter()
    done = subprocess.run(argv, env=user_env(), capture_output=True, text=True, check=False)
    took = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"winsuite report exited {done.returncode}:\n{done.stderr[-2000:]}")
    return took


def whole_runs(results: Path, output: Path, *, runs: int, reset: Callable[[], None]) -> list[float]:
    """`winsuite report` of `results` into `output`, timed whole `runs` times, `reset` before each run bringing the
    root (and the output) back to the state the first run met."""
    took = []
    for _ in range(runs):
        reset()
        took.append(whole(results, output))
    return took


def run_count(text: str) -> int:
    """A --runs value: a whole number of runs, at least one (argparse names the option when it is not)."""
    count = int(text)  # ValueError: argparse says "invalid run_count value"
    if count < 1:
        raise argparse.ArgumentTypeError(f"{count}: a report is made at least once")
    return count
