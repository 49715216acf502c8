"""Running `winsuite run` in a subprocess against the session's embedded cluster (or a user's), and reading what it
wrote."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from typing import Protocol
from typing import TypeVar

import pytest
import yaml
from kubernetes import client

from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.k8s.namespaces import RUN_ID_LABEL
from winsuite.k8s.not_found import ignore_not_found
from winsuite.k8s.waits import WaitTimeout
from winsuite.k8s.waits import wait_for_set
from winsuite.paths import DASHBOARD_DIR

WINSUITE = (sys.executable, "-m", "winsuite.cli")
RUNNER_CASES = "tests.runner_cases"
PROJECT_ROOT = Path(__file__).resolve().parents[2]

T = TypeVar("T")


class ReachedCluster(Protocol):
    """What the helpers need of a cluster: the kubeconfig a run is given, and an API client for the test's checks."""

    @property
    def api(self) -> client.ApiClient: ...

    @property
    def kubeconfig(self) -> Path: ...


# The session fixtures of the two kinds of cluster a behaviour is shown on: the embedded cluster, and one winsuite
# did not make (kwokctl's), reached only through its kubeconfig.
CLUSTERS = (pytest.param("cluster", id="embedded"), pytest.param("foreign_cluster", id="foreign"))


def asked_cluster(request: pytest.FixtureRequest) -> ReachedCluster:
    """The cluster of a fixture parametrized with CLUSTERS."""
    cluster: ReachedCluster = request.getfixturevalue(request.param)
    return cluster


def target_os(cluster: ReachedCluster) -> str:
    """The OS a run targets: the embedded cluster's real node's; on a user's cluster, Windows (its default job's,
    and the foreign cluster's kwok nodes')."""
    return "linux" if isinstance(cluster, EmbeddedCluster) else "windows"


def run_args(cluster: ReachedCluster, root: Path, *extra: str, cases: str | None = RUNNER_CASES) -> list[str]:
    """The embedded cluster's job there; elsewhere, as a user runs it: the default job of a cluster given by
    --kubeconfig."""
    job = ("--job", "embedded") if isinstance(cluster, EmbeddedCluster) else ()
    return [*WINSUITE, "run", *job, "--kubeconfig", str(cluster.kubeconfig), "--results-root", str(root),
            *(("--cases", cases) if cases else ()), "-n", "2", *extra]


def start(cluster: ReachedCluster, root: Path, *extra: str, cases: str | None = RUNNER_CASES
          ) -> subprocess.Popen[str]:
    """`winsuite run` in the background, on the test cases `cases` (None: the catalog's, and upstream's)."""
    return subprocess.Popen(run_args(cluster, root, *extra, cases=cases), cwd=PROJECT_ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=dict(os.environ))


def together(*runs: Callable[[], T]) -> list[T]:
    """Independent runs at once, their results in order: a run spends most of its time waiting on its cluster, and
    runs of their own run ids do not see each other (as concurrent runs are meant to)."""
    with ThreadPoolExecutor(len(runs)) as pool:
        futures = [pool.submit(call) for call in runs]
        return [future.result() for future in futures]


def apiserver_pid(cluster: EmbeddedCluster) -> int:
    proc = cluster.target.state().process("kube-apiserver")
    assert proc is not None
    return proc.pid


@dataclasses.dataclass
class Row:
    name: str
    status: str  # passed, failed, skipped
    message: str
    properties: dict[str, str]


@dataclasses.dataclass
class Build:
    path: Path

    @property
    def started(self) -> dict[str, Any]:
        return dict(json.loads((self.path / "started.json").read_text()))

    @property
    def finished(self) -> dict[str, Any]:
        return dict(json.loads((self.path / "finished.json").read_text()))

    def rows(self, junit: str = "junit_01.xml") -> list[Row]:
        root = ET.parse(self.path / "artifacts" / junit).getroot()
        rows = []
        for case in root.iter("testcase"):
            failure, skipped = case.find("failure"), case.find("skipped")
            status = "failed" if failure is not None else "skipped" if skipped is not None else "passed"
            element = failure if failure is not None else skipped
            props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
            rows.append(Row(case.get("name", ""), status, element.get("message", "") if element is not None else "",
                            props))
        return rows


def verdicts(build: Build) -> dict[str, list[str]]:
    """Each row's name -> its statuses (every attempt), over both phases."""
    rows: dict[str, list[str]] = {}
    for junit in ("junit_01.xml", "junit_02.xml"):
        if (build.path / "artifacts" / junit).exists():
            for row in build.rows(junit):
                rows.setdefault(row.name, []).append(row.status)
    return rows


def job_dirs(root: Path) -> list[Path]:
    """The job directories of a results root (not the dashboard a run writes there)."""
    return [p for p in root.iterdir() if p.is_dir() and p.name != DASHBOARD_DIR]


def only_build(root: Path) -> Build:
    (job,) = job_dirs(root)
    (build,) = [p for p in job.iterdir() if p.is_dir()]
    return Build(build)


def run_namespaces(cluster: ReachedCluster, run_id: str, gone_within: float = 120.0) -> list[str]:
    """The run's namespaces it left behind: any it did not delete (seen at once, as the run ends without waiting
    for the namespace controller), else any still there after `gone_within` seconds."""
    listed = client.CoreV1Api(cluster.api).list_namespace(label_selector=f"{RUN_ID_LABEL}={run_id}")
    kept = [ns.metadata.name for ns in listed.items if ns.metadata.deletion_timestamp is None]
    if kept:
        return kept
    try:
        wait_for_namespaces_gone(cluster.api, run_id, timeout=gone_within)
    except WaitTimeout as err:
        return [str(err)]
    return []


def wait_for_event(build_root: Path, junit: str, kind: str, timeout: float, predicate: Any = None) -> dict[str, Any]:
    """Poll the phase's event log (a file the run appends to) until an event of `kind` shows up."""
    deadline = time.monotonic() + timeout
    name = junit.replace("junit", "winsuite-events").replace(".xml", ".jsonl")
    while time.monotonic() < deadline:
        for path in build_root.rglob(name):
            for line in path.read_text().splitlines():
                try:
                    event = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if event.get("event") == kind and (predicate is None or predicate(event)):
                    return dict(event)
        time.sleep(0.2)  # a file being written by another process: there is nothing to watch but the file
    raise AssertionError(f"no {kind} event in {name} under {build_root} after {timeout}s")


def wait_for_file(root: Path, name: str, timeout: float) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = next(root.rglob(name), None)
        if found is not None:
            return found
        time.sleep(0.2)
    raise AssertionError(f"no {name} under {root} after {timeout}s")


def wait_for_namespaces_gone(api: client.ApiClient, run_id: str, timeout: float) -> None:
    wait_for_set(
        client.CoreV1Api(api).list_namespace, namespace=None, label_selector=f"{RUN_ID_LABEL}={run_id}",
        what=f"the namespaces of run {run_id} to be deleted", condition=lambda items: not items,
        timeout=timeout, describe=lambda items: f"still there: {', '.join(n.metadata.name for n in items)}",
    )


@contextlib.contextmanager
def service_account_kubeconfig(cluster: ReachedCluster, directory: Path, namespace: str, account: str,
                               cluster_roles: Sequence[str] = ()) -> Iterator[Path]:
    """The cluster's kubeconfig with its user replaced by a token (TokenRequest) of service account `account`, made
    in a namespace of its own and bound to `cluster_roles`; the account, its namespace and its bindings go after."""
    core, rbac = client.CoreV1Api(cluster.api), client.RbacAuthorizationV1Api(cluster.api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
    bindings = {f"{namespace}-{role}": role for role in cluster_roles}
    try:
        core.create_namespaced_service_account(namespace, client.V1ServiceAccount(
            metadata=client.V1ObjectMeta(name=account)))
        for binding, role in bindings.items():
            rbac.create_cluster_role_binding(client.V1ClusterRoleBinding(
                metadata=client.V1ObjectMeta(name=binding),
                role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=role),
                subjects=[client.RbacV1Subject(kind="ServiceAccount", name=account, namespace=namespace)]))
        token = core.create_namespaced_service_account_token(account, namespace, {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600}}).status.token
        config = yaml.safe_load(cluster.kubeconfig.read_text())
        for user in config["users"]:
            user["user"] = {"token": token}
        path = directory / f"{account}.kubeconfig"
        path.write_text(yaml.safe_dump(config))
        yield path
    finally:
        for binding in bindings:
            with ignore_not_found():
                rbac.delete_cluster_role_binding(binding)
        core.delete_namespace(namespace)
