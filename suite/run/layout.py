"""Where one run's results go: the build directory in the prow layout and its parts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from winsuite.given_paths import unwritable
from winsuite.policy.run_config import RunConfig
from winsuite.run.results import prow
from winsuite_reports.conventions import BUILD_LOG
from winsuite_reports.conventions import artifacts_dir


@dataclasses.dataclass
class Layout:
    build_dir: Path
    build_id: str
    job_dir: Path | None  # set when the build sits in <root>/<job>/<build> (latest-build.txt, dashboard)

    @property
    def artifacts(self) -> Path:
        return artifacts_dir(self.build_dir)

    @property
    def build_log(self) -> Path:
        return self.build_dir / BUILD_LOG

    @property
    def diagnostics_dir(self) -> Path:
        """Where failed tests' diagnostics go (linked from their rows, relative to the build directory)."""
        return self.artifacts

    @property
    def cluster_logs_dir(self) -> Path:
        return self.artifacts / "cluster"

    def create(self) -> None:
        """The build's directories; a place that cannot hold them is the user's to fix, said in one line."""
        try:
            self.artifacts.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise unwritable("results", err.filename or self.artifacts, err) from None


def layout_of(run: RunConfig, results_root: str, build_id: str | None) -> Layout:
    """The job's `artifacts` directory as the build (prow's $ARTIFACTS), else <results root>/<job>/<build id>."""
    artifacts = run.job.artifacts
    if artifacts:
        build_dir = Path(artifacts)
        return Layout(build_dir, build_id or build_dir.name, None)
    job_dir = Path(results_root) / run.job.name
    try:
        build = build_id or prow.new_build_id(job_dir)
    except OSError as err:
        raise unwritable("results", err.filename or job_dir, err) from None
    return Layout(job_dir / build, build, job_dir)
