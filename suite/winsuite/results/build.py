"""A build in the prow layout and its one writer: started.json at its start, each phase's JUnit file as rows finish and
again once they are judged, finished.json (with artifacts/metadata.json) once at its end, then latest-build.txt.

Whatever makes a build (a run here, a shard in its pod, a run inside the cluster, `winsuite merge`) hands its rows to
a Build and writes none of these files itself. A phase is named by its JUnit file (junit_01.xml, junit_02.xml).
"""

from __future__ import annotations

import dataclasses
import json
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from winsuite.policy.run_config import Output
from winsuite.results import junit
from winsuite.results.model import Attempt
from winsuite.results.prow import BuildResult
from winsuite_reports.conventions import FINISHED
from winsuite_reports.conventions import LATEST_BUILD
from winsuite_reports.conventions import METADATA
from winsuite_reports.conventions import STARTED
from winsuite_reports.conventions import artifacts_dir

# A phase's rows as its file shows them (--ops-readiness labels them with the cases that selected them).
Label = Callable[[str, list[Attempt]], list[Attempt]]


@dataclasses.dataclass
class _Phase:
    judged: list[Attempt] = dataclasses.field(default_factory=list)  # final, with their evidence
    live: list[Attempt] = dataclasses.field(default_factory=list)  # finished since, not judged yet

    @property
    def rows(self) -> list[Attempt]:
        return self.judged + self.live


class Build:
    def __init__(self, output: Output, label: Label | None = None, timestamp: str | None = None) -> None:
        self.output = output
        self.label = label
        self.timestamp = timestamp  # the JUnit suites' (plain pytest gives its session's start, as its junitxml does)
        self.result: BuildResult | None = None  # set once finished.json is written
        self._phases: dict[str, _Phase] = {}

    @property
    def phases(self) -> list[str]:
        return sorted(self._phases)

    @property
    def rows(self) -> list[Attempt]:
        """Every row, phase by phase, as the JUnit files have them (unlabelled): what the build's result comes from."""
        return [row for phase in self.phases for row in self._phases[phase].rows]

    def rows_of(self, phase: str) -> list[Attempt]:
        return self._phases[phase].rows if phase in self._phases else []

    def start(self, timestamp: float, metadata: dict[str, Any]) -> None:
        _write_json(self.output.build_dir / STARTED,
                    {"timestamp": int(timestamp), "node": platform.node(), "metadata": metadata})

    def row_finished(self, phase: str, attempt: Attempt) -> None:
        """A row as its attempt finishes, before it is judged: whoever reads the build meanwhile sees it at once."""
        self._phase(phase).live.append(attempt)
        self._write(phase)

    def judged(self, phase: str, rows: list[Attempt]) -> None:
        """Rows in their final form, after the phase's rows so far; they replace its live rows (the engines that sent
        those are done). With no row, the phase's file is still written: a phase that began has its file."""
        state = self._phase(phase)
        state.judged += rows
        state.live = []
        self._write(phase)

    def finish(self, result: BuildResult, metadata: dict[str, Any]) -> None:
        """finished.json and artifacts/metadata.json, then latest-build.txt: once per build, its last files."""
        if self.result is not None:
            raise ValueError(f"{self.output.build_dir} finished already ({self.result}): finished.json is written once")
        self.result = result
        _write_json(self.output.build_dir / FINISHED, {"timestamp": int(time.time()), "passed": result.passed,
                                                       "result": str(result), "metadata": metadata})
        _write_json(artifacts_dir(self.output.build_dir) / METADATA, metadata)
        if self.output.job_dir is not None:
            junit.write_atomically(self.output.job_dir / LATEST_BUILD, self.output.build_id.encode())

    def _phase(self, phase: str) -> _Phase:
        return self._phases.setdefault(phase, _Phase())

    def _write(self, phase: str) -> None:
        """Where every row of a build is written: its phase's JUnit file, whole, replaced atomically."""
        rows = self._phases[phase].rows
        junit.write(self.output.artifacts / phase, self.label(phase, rows) if self.label is not None else rows,
                    self.timestamp)


def _write_json(path: Path, value: dict[str, Any]) -> None:
    junit.write_atomically(path, (json.dumps(value, indent=2, sort_keys=True) + "\n").encode())
