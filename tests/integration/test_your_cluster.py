"""`winsuite list` and `winsuite run` on a cluster winsuite did not make (kwokctl's, with kwok nodes as its users add
them: with kwok's taint, without it, and a Linux Node without kwok's annotation), reached only through the kubeconfig
kwokctl wrote, as a SIG member runs the README's line against their cluster."""

from __future__ import annotations

import datetime
import re
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import only_build
from tests.tools.foreign_cluster import ForeignCluster
from winsuite.components import kube
from winsuite.errors import ExitCode
from winsuite.k8s.waits import BackgroundWatch
from winsuite.policy.cluster_job import path_safe

# A handful of API and scheduling tests: the API server and the scheduler decide them, kwok's nodes suffice.
FOCUS = r"\[sig-windows\] (Scheduling|API compatibility .* rejected when spec\.hostPID is set)"
UPSTREAM_SPECS = PROJECT_ROOT / "tests" / "fixtures" / "ops-readiness-upstream" / "specifications"
OWN_REGISTRY = "winsuite.local"  # the images winsuite makes for its own clusters; never a user's
HEADER = re.compile(r"^winsuite run \S+: job (\S+) \(([^)]*)\), target OS (\S+),", re.MULTILINE)


def winsuite(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """winsuite as a user's shell starts it (umask 022)."""
    return subprocess.run([*WINSUITE, *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=timeout,
                          check=False, umask=0o022)


def context_of(kubeconfig: Path) -> str:
    return str(yaml.safe_load(kubeconfig.read_text())["current-context"])


def images_of(pod: Any) -> list[str]:
    spec = pod.spec
    containers = [*(spec.init_containers or []), *(spec.containers or []), *(spec.ephemeral_containers or [])]
    return [str(container.image) for container in containers]


def own_images_of_new_pods(seen: set[str]) -> Callable[[Any], str | None]:
    """A BackgroundWatch check from now on: a pod made from now on that asks for one of winsuite's own images (a pod of
    an earlier run, still being deleted, is not the run's); every image seen is added to `seen`."""
    since = datetime.datetime.now(datetime.UTC).replace(microsecond=0)

    def own_image(pod: Any) -> str | None:
        if pod.metadata.creation_timestamp < since:
            return None
        images = images_of(pod)
        seen.update(images)
        own = [image for image in images if image.startswith(OWN_REGISTRY)]
        return f"{pod.metadata.namespace}/{pod.metadata.name}: {', '.join(own)}" if own else None

    return own_image


def test_list_names_the_clusters_nodes_and_the_skips_they_make(foreign_cluster: ForeignCluster) -> None:
    done = winsuite("list", "--kubeconfig", str(foreign_cluster.kubeconfig), "--node-os", "windows")
    assert done.returncode == ExitCode.OK, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    (cluster,) = [line for line in done.stdout.splitlines() if line.startswith("cluster https://")]
    assert [name for name in foreign_cluster.node_names if name not in cluster] == [], cluster
    # kwok's Windows nodes run no container: what needs one is skipped, saying what the cluster has instead.
    simulated = sum(node.os == "windows" for node in foreign_cluster.nodes)
    reason = f"requires a node that runs Windows containers (found: {simulated} simulated Windows nodes)"
    assert reason in done.stdout, done.stdout[-3000:]
    # The Windows node without kwok's taint is named: winsuite keeps its own pods off it by name.
    untainted = [node.name for node in foreign_cluster.nodes if node.os == "windows" and not node.tainted]
    assert all(name in done.stderr for name in untainted), done.stderr[-2000:]


def test_run_on_the_cluster_uses_its_own_job_and_upstream_images(foreign_cluster: ForeignCluster,
                                                                 tmp_path: Path) -> None:
    core = kube.api(foreign_cluster.kubeconfig)
    seen: set[str] = set()
    version = core.list_pod_for_all_namespaces(limit=1).metadata.resource_version
    with BackgroundWatch(core.list_pod_for_all_namespaces, version, violates=own_images_of_new_pods(seen)) as pods:
        done = winsuite("run", "--kubeconfig", str(foreign_cluster.kubeconfig), "--node-os", "windows",
                        "--focus", FOCUS, "--results-root", str(tmp_path), "--run-timeout", "10m", "-n", "2",
                        timeout=900)
    output = done.stdout + done.stderr
    # Scheduling and admission tests only: each passes, or skips where this cluster lacks what it needs (its Windows
    # nodes carry no Windows taint).
    assert done.returncode == ExitCode.OK, output[-4000:]
    pods.check(f"pods with an image of {OWN_REGISTRY}")
    assert seen, "the run made no pod on the cluster: nothing was checked"
    header = HEADER.search(output)
    assert header is not None, output[-4000:]
    assert header.group(1) == f"winsuite-{path_safe(context_of(foreign_cluster.kubeconfig))}-windows"
    assert header.group(2) == "the default for a cluster given by --kubeconfig; --job to choose another"
    build = only_build(tmp_path)
    metadata = build.started["metadata"]
    assert (metadata["job"], metadata["engine"], metadata["cluster"]) == (header.group(1), "auto", "kubeconfig")
    # Every file of the build follows the umask (022 here): an uploader or a web server of another user reads it.
    modes = {str(path.relative_to(build.path)): stat.S_IMODE(path.stat().st_mode)
             for path in build.path.rglob("*") if path.is_file()}
    assert {"started.json", "finished.json", "artifacts/junit_01.xml", "artifacts/metadata.json"} <= set(modes)
    assert {name: oct(mode) for name, mode in modes.items() if mode != 0o644} == {}


def test_a_flag_run_does_not_know_is_a_usage_error(foreign_cluster: ForeignCluster) -> None:
    done = winsuite("run", "--kubeconfig", str(foreign_cluster.kubeconfig), "--no-such-flag")
    assert done.returncode == ExitCode.USAGE_ERROR, done.stdout[-2000:] + done.stderr[-2000:]
    assert "--no-such-flag" in done.stderr and "Traceback" not in done.stderr


def test_the_readmes_ops_readiness_line_selects_what_upstreams_tool_selects(foreign_cluster: ForeignCluster) -> None:
    """The 9 specification files windows-operational-readiness publishes for v1.36.3 select 26 specs with its own
    tool: the default job of a user's cluster (engine auto) runs each, natively where winsuite has a port."""
    done = winsuite("list", "--kubeconfig", str(foreign_cluster.kubeconfig), "--node-os", "windows",
                    "--ops-readiness", str(UPSTREAM_SPECS))
    assert done.returncode == ExitCode.OK, done.stdout[-2000:] + done.stderr[-2000:]
    assert "9 specification(s), 23 test case(s), 26 test(s) selected" in done.stdout, done.stdout[-2000:]
