"""What the integration tests' `kind_cluster` fixture yields, and `winsuite run` on it or on the embedded cluster."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import Build
from tests.integration.runner_support import only_build
from tests.tools.host_state import HostState
from winsuite.cluster.embedded.state import Layout
from winsuite.cluster.kind import KindTarget
from winsuite.errors import ExitCode
from winsuite.paths import cache_dir

RUN_TIMEOUT = 1800


@dataclasses.dataclass
class KindCluster:
    """A running kind cluster, whether this session created it, and the host as it was before."""

    target: KindTarget
    started_by_session: bool
    host_before: HostState
    embedded_before: bool  # whether an embedded cluster was running when host_before was taken

    @property
    def name(self) -> str:
        return self.target.name

    @property
    def kubeconfig(self) -> Path:
        return self.target.kubeconfig_path()


def embedded_running() -> bool:
    """Whether an embedded cluster runs on this machine now (its state file exists from `up` to `down`)."""
    return any(Layout(path.name).state_file.exists() for path in (cache_dir() / "clusters").glob("*"))


def run(cluster_args: list[str], root: Path, *extra: str) -> Build:
    """`winsuite run --node-os linux` of the default job on the named cluster; the build it wrote."""
    argv = [*WINSUITE, "run", *cluster_args, "--node-os", "linux", "--results-root", str(root), "-n", "2", *extra]
    done = subprocess.run(argv, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False)
    assert done.returncode in (ExitCode.OK, ExitCode.TESTS_FAILED), done.stdout[-3000:] + done.stderr[-3000:]
    return only_build(root)


def on_kind(cluster: KindCluster) -> list[str]:
    return ["--cluster-type", "kind", "--cluster-name", cluster.name]

