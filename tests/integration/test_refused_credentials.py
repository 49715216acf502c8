"""A run with credentials that may not do what a run needs (a service account bound to nothing): a usage error that
names what the cluster refuses and to whom, before the run makes anything, and a build whose finished.json says so;
never an internal error."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import only_build
from tests.integration.runner_support import service_account_kubeconfig
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.errors import ExitCode

pytestmark = pytest.mark.cluster

NAMESPACE = "winsuite-limited"
ACCOUNT = "limited"


def test_a_run_whose_credentials_are_refused_says_what_and_to_whom(cluster: EmbeddedCluster, tmp_path: Path) -> None:
    with service_account_kubeconfig(cluster, tmp_path, NAMESPACE, ACCOUNT) as limited_kubeconfig:
        done = subprocess.run(
            [*WINSUITE, "run", "--kubeconfig", str(limited_kubeconfig), "--node-os", "linux", "--focus",
             r"Pods should get a host IP", "--results-root", str(tmp_path / "results")],
            cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == ExitCode.USAGE_ERROR, output
    assert "internal error" not in output and "Traceback" not in output, output
    said = [line for line in output.splitlines() if line.startswith("winsuite: error:")]
    assert said and said[0].startswith(
        f"winsuite: error: the cluster refuses system:serviceaccount:{NAMESPACE}:{ACCOUNT} to create namespaces "
        "(needed to run tests) and "), output
    assert said[0].endswith("; nothing was created"), said[0]
    finished = only_build(tmp_path / "results").finished
    assert finished["result"] == "FAILURE" and finished["passed"] is False
    assert finished["metadata"]["error"] == said[0].removeprefix("winsuite: error: ")
