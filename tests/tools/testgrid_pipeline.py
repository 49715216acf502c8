"""TestGrid's own pipeline over a results root: its updater, tabulator and summarizer, built from the Go module
proxy into the cache, reading the builds from a loopback GCS server as they read gs:// in production.

    programs = build()                                   # minutes the first time, then cached by TestGrid version
    summaries = Pipeline(programs, server, workdir).summarize(results_root, TabOptions())
    summaries["ci-job"]["overall_status"], summaries["ci-job"]["failing_test_summaries"], …

Each job directory under the root becomes a test group and a tab of one dashboard; what comes back is the
summarizer's DashboardTabSummary of each tab as JSON (TestGrid's field names, pb/summary/summary.proto).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.tools.gcs_server import GcsServer
from tests.tools.go_programs import GoPrograms
from tests.tools.go_programs import ensure_built
from winsuite.components.logs import tail
from winsuite.components.progress import Reporter
from winsuite.components.progress import stderr_reporter

MODULE = "github.com/GoogleCloudPlatform/testgrid"
# TestGrid's newest release. Its updater, tabulator, summarizer, result and gcs packages are those of the newest
# commit of its repository (3136f937, June 2026) but for comments; the module proxy serves no pseudo-version after it.
TESTGRID = GoPrograms(
    key="testgrid",
    module=MODULE,
    version="v0.0.175",
    minimum_go="1.22",
    programs={
        "updater": f"{MODULE}/cmd/updater",
        "tabulator": f"{MODULE}/cmd/tabulator",
        "summarizer": f"{MODULE}/cmd/summarizer",
        "testgrid-proto": "./testgrid-proto",  # JSON <-> TestGrid's protocol buffers, with its own types
    },
    local_packages={"testgrid-proto": Path(__file__).with_name("testgrid_proto")},
)
RUN_SECONDS = 600.0
# The updater makes a Pub/Sub client at start: pointed at an emulator address it needs no credentials, and it
# subscribes to nothing, so nothing ever connects there.
PUBSUB_EMULATOR = "127.0.0.1:1"
_BUCKETS = itertools.count(1)

JsonObject = dict[str, object]


class PipelineError(RuntimeError):
    """A TestGrid program failed or logged an error; the message names it and shows its log's tail."""


def build(report: Reporter = stderr_reporter) -> dict[str, Path]:
    """The pipeline's programs, built into ~/.cache/winsuite/bin/testgrid-<version>-<…>/ when missing."""
    return ensure_built(TESTGRID, report)


@dataclass(frozen=True)
class TabOptions:
    """The test group's and tab's options, with the Kubernetes defaults (config/testgrids/default.yaml)."""

    num_columns_recent: int = 10
    num_failures_to_alert: int = 3
    num_passes_to_disable_alert: int = 1
    days_of_results: int = 15


def configuration(bucket: str, dashboard: str, jobs: list[str], options: TabOptions) -> JsonObject:
    """TestGrid's Configuration (pb/config/config.proto) for one tab per job, as JSON.

    No column_header, so a column is named by its build id (latest green is a build id); no prowjob analysis,
    so no "Pod" row for builds without podinfo.json; health analysis on, for per-test flakiness."""
    groups = [
        {
            "name": job,
            "gcs_prefix": f"{bucket}/logs/{job}",
            "use_kubernetes_client": True,
            "disable_prowjob_analysis": True,
            "days_of_results": options.days_of_results,
            "num_columns_recent": options.num_columns_recent,
            "num_failures_to_alert": options.num_failures_to_alert,
            "num_passes_to_disable_alert": options.num_passes_to_disable_alert,
        }
        for job in jobs
    ]
    tabs = [
        {
            "name": job,
            "test_group_name": job,
            "num_columns_recent": options.num_columns_recent,
            "health_analysis_options": {"enable": True},
        }
        for job in jobs
    ]
    return {"test_groups": groups, "dashboards": [{"name": dashboard, "dashboard_tab": tabs}]}


@dataclass(frozen=True)
class Pipeline:
    programs: dict[str, Path]
    server: GcsServer
    workdir: Path

    def summarize(self, results: Path, options: TabOptions, dashboard: str = "winsuite") -> dict[str, JsonObject]:
        """Upload every job under `results` to a new bucket, run the pipeline once; each tab's summary by name."""
        bucket = f"testgrid-{os.getpid()}-{next(_BUCKETS)}"
        self.server.create_bucket(bucket)
        jobs = sorted(path.name for path in results.iterdir() if path.is_dir())
        for job in jobs:
            self.server.upload_tree(bucket, f"logs/{job}", results / job)
        config = json.dumps(configuration(bucket, dashboard, jobs, options)).encode()
        self.server.upload(bucket, "config", self._run("testgrid-proto", "config", stdin=config))
        flags = [f"--config=gs://{bucket}/config", "--confirm"]
        self._run("updater", *flags, "--group-concurrency=1", "--build-concurrency=2")
        self._run("tabulator", *flags)
        self._run("summarizer", *flags)
        (name,) = self.server.list(bucket, "summary/")
        summary = json.loads(self._run("testgrid-proto", "summary", stdin=self.server.download(bucket, name)))
        return {str(tab["dashboard_tab_name"]): tab for tab in summary["tab_summaries"]}

    def _run(self, program: str, *args: str, stdin: bytes = b"") -> bytes:
        env = {**os.environ, **self.server.client_env(), "PUBSUB_EMULATOR_HOST": PUBSUB_EMULATOR,
               "GOOGLE_CLOUD_PROJECT": "winsuite"}
        log = self.workdir / f"{program}.log"
        self.workdir.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as err:
            try:
                proc = subprocess.run([str(self.programs[program]), *args], input=stdin, stdout=subprocess.PIPE,
                                      stderr=err, env=env, timeout=RUN_SECONDS, check=False)
            except subprocess.TimeoutExpired:
                raise PipelineError(
                    f"{program} did not finish within {RUN_SECONDS:.0f}s; log {log}:\n{tail(log)}") from None
        errors = [line for line in log.read_text(errors="replace").splitlines()
                  if "level=error" in line or "level=fatal" in line]
        if proc.returncode != 0 or errors:
            raise PipelineError(f"{program} {' '.join(args)} failed (exit {proc.returncode}); log {log}:\n{tail(log)}")
        return proc.stdout
