"""The per-test timeout for upstream specs: ginkgo has no per-spec timeout flag, so a spec whose progress report
(ginkgo --poll-progress-after, set to the per-test timeout) shows it still running is interrupted in its own e2e.test
process, which runs the spec's cleanup; the specs that process then skipped run again in another ginkgo run."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

from winsuite.run.engines.tether import WATCHER_NAME

# ginkgo's DefaultReporter.EmitProgressReport: a header naming the parallel process (none with one process), then
# the spec's full name with its runtime.
_PROCESS_HEADER = re.compile(r"^\s*Progress Report for Ginkgo Process #(\d+)$")
_SPEC_RUNTIME = re.compile(r"^\s*(.+) \(Spec Runtime: [^)]*\)$")
# Only the report --poll-progress-after makes says this; the one ginkgo prints on an interrupt ("Here's a current
# progress report:") or on request names a spec that is not overdue.
_POLLING = "Automatically polling progress:"
_PARALLEL_PROCESS = "--ginkgo.parallel.process="


@dataclasses.dataclass(frozen=True)
class Overdue:
    """A spec still running when its progress report came: it has run past the per-test timeout."""

    name: str
    process: int | None  # ginkgo's parallel process number; None when ginkgo runs one process


class ProgressReports:
    """Reads ginkgo's output line by line for the specs its progress reports name."""

    def __init__(self, name_of: Callable[[str], str | None]) -> None:
        self.name_of = name_of  # the selected spec a line names, if any
        self.process: int | None = None
        self.polling = False  # within a report that --poll-progress-after made

    def read(self, line: str) -> Overdue | None:
        header = _PROCESS_HEADER.match(line)
        if header:
            self.process = int(header.group(1))
            return None
        if line.strip() == _POLLING:
            self.polling = True
            return None
        subject = _SPEC_RUNTIME.match(line)
        name = self.name_of(subject.group(1)) if subject else None
        if name is None:
            return None
        overdue = Overdue(name, self.process) if self.polling else None
        self.process, self.polling = None, False
        return overdue


def e2e_process(ginkgo_pid: int, process: int | None, proc: Path = Path("/proc")) -> int | None:
    """The pid of the e2e.test child of ginkgo that runs parallel process `process` (with one process, its only
    child but the run's tether); None when there is no such process (any more)."""
    children: list[tuple[int, list[str]]] = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            name, _, fields = stat.partition(" (")[2].rpartition(") ")  # the command name may hold ") "
            parent = int(fields.split()[1])  # state, ppid
            argv = (entry / "cmdline").read_bytes().decode("utf-8", errors="replace").split("\0")
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not ours to read
        if parent == ginkgo_pid and name != WATCHER_NAME:
            children.append((int(entry.name), argv))
    if process is None:
        return children[0][0] if len(children) == 1 else None
    return next((pid for pid, argv in children if f"{_PARALLEL_PROCESS}{process}" in argv), None)
