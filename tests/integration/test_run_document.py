"""The run is resolved once: one `winsuite run` with two xdist workers and both phases reads its job file, its
exclusion list and its repo list (served over HTTP on loopback) exactly once, and every phase runs what the run
document in the build says."""

from __future__ import annotations

import http.server
import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import only_build
from tests.integration.runner_support import run_args
from tests.tools.embedded_cluster import EmbeddedCluster
from tests.tools.file_opens import FileOpens
from winsuite.policy.run_config import RunConfig

pytestmark = pytest.mark.cluster

REPO_LIST = "promoterE2eRegistry: registry.k8s.io/e2e-test-images\n"
# Two parallel tests (two pytest workers) and one serial test (the second phase).
FOCUS = "passes when the API server answers|fails with <b>|runs alone in the serial phase"


class RepoListServer(http.server.ThreadingHTTPServer):
    requests: list[str]


class RepoListHandler(http.server.BaseHTTPRequestHandler):
    server: RepoListServer

    def do_GET(self) -> None:  # http.server's name
        self.server.requests.append(self.path)
        body = REPO_LIST.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # http.server's signature
        pass


@pytest.fixture
def repo_list_server() -> Iterator[RepoListServer]:
    server = RepoListServer(("127.0.0.1", 0), RepoListHandler)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_a_run_reads_its_job_exclusions_and_repo_list_once(cluster: EmbeddedCluster, tmp_path: Path,
                                                           repo_list_server: RepoListServer) -> None:
    exclusions = tmp_path / "exclusions.yaml"
    exclusions.write_text("apiVersion: winsuite.io/v1alpha1\nkind: ExclusionList\nexclusions:\n"
                          "- {pattern: 'never matches anything', reason: r, issue: 'https://example.invalid/1'}\n")
    port = repo_list_server.server_address[1]
    job = tmp_path / "job.yaml"
    job.write_text(f"apiVersion: winsuite.io/v1alpha1\nkind: Job\nname: resolved-once\nnodeOS: linux\n"
                   f"engine: native\nrepoList: http://127.0.0.1:{port}/repo-list.yaml\n"
                   f"exclusions: [exclusions.yaml]\nparallelism: 2\n")
    with FileOpens([job, exclusions]) as opens:
        done = subprocess.run(run_args(cluster, tmp_path / "results", "--job", str(job), "--focus", FOCUS),
                              cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=900, check=False)
        job_opens, exclusion_opens = opens.count(job), opens.count(exclusions)
    output = done.stdout[-3000:] + done.stderr[-3000:]
    build = only_build(tmp_path / "results")
    assert " -n 2" in (build.path / "build-log.txt").read_text(), output  # the parallel phase had two workers
    assert {r.name for r in build.rows("junit_01.xml")} and {r.name for r in build.rows("junit_02.xml")}, output
    assert repo_list_server.requests == ["/repo-list.yaml"], output
    assert (job_opens, exclusion_opens) == (1, 1), output
    run = RunConfig.load(build.path / "artifacts" / "run.json")
    assert run.repo_list.text == REPO_LIST and run.job.name == "resolved-once"
    assert run.facts is not None and run.narrowing is None
    assert json.loads((build.path / "artifacts" / "run.json").read_text())["kind"] == "Run"
