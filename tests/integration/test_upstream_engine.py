"""The upstream engine on the embedded cluster's real node, against ginkgo + e2e.test run directly on the same cluster.

The focus selects upstream conformance specs, most without a native port: winsuite (--engine upstream) must give
every spec the verdict ginkgo gives it, in JUnit rows that TestGrid reads the same; --engine auto runs the ports
natively and the rest upstream, in one build. SIGINT or SIGTERM during the upstream phase keeps the finished
rows, marks the running spec interrupted, ends ABORTED and leaves no e2e.test namespace and no placement policy.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import Build
from tests.integration.runner_support import only_build
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.authoring.targeting import DEFAULT_WINDOWS_TAINT
from winsuite.authoring.targeting import OS_LABEL
from winsuite.authoring.targeting import SIMULATED_NODE_TAINT_KEY
from winsuite.authoring.targeting import Placement
from winsuite.components import images
from winsuite.errors import ExitCode
from winsuite.inputs.pins import load_pins
from winsuite.k8s import events
from winsuite.k8s import namespaces
from winsuite.k8s.namespaces import E2E_FRAMEWORK_LABEL
from winsuite.k8s.namespaces import e2e_namespaces
from winsuite.results.merge import CROSS_CHECK_PREFIX
from winsuite.run.engines import placement_policy
from winsuite.run.engines.ginkgo_report import spec_name
from winsuite.run.engines.ginkgo_report import spec_reports
from winsuite.run.engines.upstream import NON_BLOCKING_TAINTS
from winsuite.run.engines.upstream_toolchain import Toolchain
from winsuite.run.engines.upstream_toolchain import resolve
from winsuite_reports.junit import read_attempts

pytestmark = pytest.mark.cluster

# 36 conformance specs: 27 without a native port, 9 with one (ConfigMap, Secrets, Pods); 4 serial ones.
FOCUS = (r"\[sig-node\] (PodTemplates|Lease|RuntimeClass|Pods Extended|Secrets|ConfigMap) .*\[Conformance\]"
         r"|\[sig-node\] Pods should (get a host IP|be submitted and removed|run through the lifecycle)"
         r"|\[sig-api-machinery\] (Servers with support for Table|Discovery|Namespaces \[Serial\]) .*\[Conformance\]")
SKIP = "issue 500 podspec updates"  # four minutes of updates: too slow for the project's own tests
SLOW_SPEC = "issue 500 podspec updates"


@pytest.fixture(scope="module")
def node_cluster(cluster: EmbeddedCluster) -> EmbeddedCluster:
    """The session's cluster, when it has its real node (the specs need one that runs containers)."""
    if not cluster.has_real_node:
        pytest.skip(f"needs the embedded cluster's real Linux node ({cluster.real_node_reason})")
    return cluster


@pytest.fixture(scope="module")
def toolchain(node_cluster: EmbeddedCluster) -> Toolchain:
    return resolve(None, load_pins().kubernetes, lambda line: print(line, file=sys.stderr))


def winsuite(cluster: EmbeddedCluster, root: Path, *extra: str) -> list[str]:
    return [*WINSUITE, "run", "--kubeconfig", str(cluster.kubeconfig), "--results-root", str(root),
            "--node-os", "linux", "--repo-list", str(images.repo_list_file()), "-n", "2", "--job", "embedded-linux",
            *extra]


@pytest.fixture(scope="module")
def ginkgo_verdicts(node_cluster: EmbeddedCluster, toolchain: Toolchain, tmp_path_factory: pytest.TempPathFactory
                    ) -> tuple[dict[str, str], Path]:
    """ginkgo --procs=2 e2e.test, directly: each selected spec's state, and e2e.test's own JUnit (--report-dir).
    The wait, once per module, is e2e.test's start and its run of the focus's specs on the real node."""
    work = tmp_path_factory.mktemp("ginkgo")
    argv = [str(toolchain.ginkgo), "--procs=2", "--no-color", "--silence-skips", "--json-report=report.json",
            f"--output-dir={work}", f"--focus={FOCUS}", f"--skip={SKIP}",
            str(toolchain.e2e_test), "--", f"--kubeconfig={node_cluster.kubeconfig}", "--provider=skeleton",
            f"--report-dir={work}",
            f"--non-blocking-taints={','.join(NON_BLOCKING_TAINTS)},os"]
    env = dict(os.environ, KUBE_TEST_REPO_LIST=str(images.repo_list_file()))
    subprocess.run(argv, cwd=work, env=env, capture_output=True, timeout=1200, check=False)
    verdicts = {spec_name(r): str(r["State"]) for r in spec_reports(work / "report.json") if r["State"] != "skipped"}
    assert len(verdicts) >= 30, verdicts
    return verdicts, work / "junit_01.xml"


def run_winsuite(cluster: EmbeddedCluster, root: Path, *extra: str) -> Build:
    done = subprocess.run(winsuite(cluster, root, "--focus", FOCUS, "--skip", SKIP, *extra), cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=1800, check=False)
    assert done.returncode in (ExitCode.OK, ExitCode.TESTS_FAILED), done.stdout + done.stderr
    return only_build(root)


def final_rows(build: Build) -> dict[str, tuple[str, dict[str, str]]]:
    rows = {}
    for junit in ("junit_01.xml", "junit_02.xml"):
        if (build.path / "artifacts" / junit).exists():
            rows.update({r.name.removeprefix("[It] "): (r.status, r.properties) for r in build.rows(junit)})
    return rows


def test_upstream_engine_gives_ginkgos_verdict_for_every_spec(
        real_node: EmbeddedCluster, ginkgo_verdicts: tuple[dict[str, str], Path], tmp_path: Path) -> None:
    """`--engine upstream` gives each spec ginkgo's verdict, in rows TestGrid reads as it reads e2e.test's own JUnit,
    and leaves no placement policy. The wait is a whole upstream run of the focus on the real node: e2e.test's start,
    its parallel specs, then its serial ones in a phase of their own."""
    verdicts, ginkgo_junit = ginkgo_verdicts
    build = run_winsuite(real_node, tmp_path, "--engine", "upstream")
    rows = final_rows(build)
    assert {name: status for name, (status, _) in rows.items()} == {
        name: "passed" if state == "passed" else "failed" for name, state in verdicts.items()}
    assert all(props["engine"] == "upstream" for _, props in rows.values())
    serial = [name for name in rows if "[Serial]" in name]
    assert serial and {r.name.removeprefix("[It] ") for r in build.rows("junit_02.xml")} == set(serial)
    # TestGrid's reading: the same row names and cells from winsuite's files as from ginkgo's own JUnit.
    ours = {a.key: a.cell.status for f in ("junit_01.xml", "junit_02.xml")
            for a in read_attempts(build.path / "artifacts" / f)}
    theirs = {a.key: a.cell.status for a in read_attempts(ginkgo_junit) if a.key in verdicts}
    assert ours == theirs
    assert build.finished["metadata"]["run-id"] not in placement_policy.placed_runs(real_node.api)


def test_auto_runs_ports_natively_and_the_rest_upstream_in_one_build(
        real_node: EmbeddedCluster, ginkgo_verdicts: tuple[dict[str, str], Path], tmp_path: Path) -> None:
    """`--engine auto` runs the focus's ports natively and every other spec upstream, with ginkgo's verdict, in one
    build. The wait is a whole run of the focus on the real node, on both engines: the ports, and e2e.test's start and
    the rest of the specs."""
    verdicts, _ = ginkgo_verdicts
    rows = final_rows(run_winsuite(real_node, tmp_path, "--engine", "auto"))
    assert set(rows) == set(verdicts)
    engines = {name: props["engine"] for name, (_, props) in rows.items()}
    native = {n for n, e in engines.items() if e == "native"}
    assert 5 <= len(native) < len(rows) / 2, engines
    for name, (status, _) in rows.items():
        if name not in native:
            assert status == ("passed" if verdicts[name] == "passed" else "failed"), name


# Alone: with another run active, a run hands the deletion of e2e.test's namespaces to it (checked here: none left).
@pytest.mark.runs_alone
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_the_upstream_phase_keeps_finished_rows_and_leaves_nothing(
        real_node: EmbeddedCluster, toolchain: Toolchain, tmp_path: Path, signum: int) -> None:
    before = e2e_namespaces(real_node.api)
    argv = winsuite(real_node, tmp_path, "--engine", "upstream", "--focus",
                    rf"{SLOW_SPEC}|\[sig-node\] PodTemplates .*\[Conformance\]")
    process = subprocess.Popen(argv, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    try:
        deadline = time.monotonic() + 600
        seen = ""
        while time.monotonic() < deadline and "PASS [sig-node] PodTemplates" not in seen:
            seen += process.stdout.readline()  # the progress line names each spec as it ends
        assert "PASS [sig-node] PodTemplates" in seen, seen
        time.sleep(3)  # the slow spec is now past its start
        process.send_signal(signum)
        output, _ = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == ExitCode.INTERRUPTED, seen + output
    build = only_build(tmp_path)
    assert build.finished["result"] == "ABORTED"
    assert signal.Signals(signum).name in build.finished["metadata"]["interrupted"]
    rows = {r.name.removeprefix("[It] "): r for r in build.rows("junit_01.xml")}
    assert sum(r.status == "passed" for name, r in rows.items() if "PodTemplates" in name) == 3
    slow = next(r for name, r in rows.items() if SLOW_SPEC in name)
    assert slow.status == "failed" and slow.properties.get("interrupted") == "true", slow
    assert e2e_namespaces(real_node.api) <= before
    assert placement_policies(real_node) == []


def placement_policies(cluster: EmbeddedCluster) -> list[str]:
    objects = client.CustomObjectsApi(cluster.api)
    return [o["metadata"]["name"] for plural in (placement_policy.POLICIES, placement_policy.BINDINGS)
            for o in objects.list_cluster_custom_object(placement_policy.GROUP, placement_policy.VERSION,
                                                        plural)["items"]
            if o["metadata"]["name"].startswith("winsuite-placement-")]


# Alone: it removes every placement policy there is, and any active run's would place its pod too.
@pytest.mark.runs_alone
def test_the_placement_policy_places_e2e_pods_only_and_goes_away(cluster: EmbeddedCluster) -> None:
    api = cluster.api
    core = client.CoreV1Api(api)
    run_id = f"policytest{os.getpid()}"
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "pause"}]}}
    e2e_ns, other_ns = f"e2e-{run_id}", f"other-{run_id}"
    # A run this session killed on purpose (SIGKILL, a hung API server) keeps its Lease, and so its policy, for up
    # to 90 s: no run is active now, so every policy but this test's is such a leftover.
    placement_policy.remove_stale(api, active=set())
    assert placement_policy.install(api, run_id, Placement("windows"))
    try:
        core.create_namespace({"metadata": {"name": e2e_ns, "labels": {E2E_FRAMEWORK_LABEL: "placement"}}})
        core.create_namespace({"metadata": {"name": other_ns}})
        wait_until_the_policy_applies(core, e2e_ns, pod)
        placed = core.create_namespaced_pod(e2e_ns, pod)
        assert placed.spec.node_selector == {OS_LABEL: "windows"} and placed.spec.os.name == "windows"
        assert [t.key for t in placed.spec.tolerations or []].count(DEFAULT_WINDOWS_TAINT.key) == 1
        assert all(t.key != SIMULATED_NODE_TAINT_KEY for t in placed.spec.tolerations or [])
        untouched = core.create_namespaced_pod(other_ns, pod)
        assert untouched.spec.node_selector is None and untouched.spec.os is None
        # Only simulated Windows nodes here, all tainted: the placed pod must not be bound to one.
        event = events.wait_for_event(api, e2e_ns, involved="p", reason="FailedScheduling", timeout=60)
        assert "untolerated taint" in event.message and core.read_namespaced_pod("p", e2e_ns).spec.node_name is None
    finally:
        placement_policy.remove(api, run_id)
        for name in (e2e_ns, other_ns):
            namespaces.delete(api, name)
    assert placement_policies(cluster) == []


def wait_until_the_policy_applies(core: client.CoreV1Api, namespace: str, pod: dict[str, Any]) -> None:
    """A new policy reaches the API server's admission chain within moments, and a removed one leaves it as late:
    dry-run pods until one is placed on Windows."""
    deadline = time.monotonic() + 30
    while (core.create_namespaced_pod(namespace, pod, dry_run="All").spec.node_selector or {}).get(
            OS_LABEL) != "windows":
        assert time.monotonic() < deadline, "the MutatingAdmissionPolicy never applied"
        time.sleep(0.5)  # polling: there is no watch for "admission plugins loaded"


def test_both_engines_cross_check_the_ports(real_node: EmbeddedCluster, tmp_path: Path) -> None:
    """`--engine both` runs each port and its upstream twin, and each twin's cross-check row fails exactly where the
    two verdicts differ. The wait is a whole run of the focus on the real node: every spec upstream (e2e.test's start
    included), and the ports natively."""
    build = run_winsuite(real_node, tmp_path, "--engine", "both")
    rows = [r for junit in ("junit_01.xml", "junit_02.xml") if (build.path / "artifacts" / junit).exists()
            for r in build.rows(junit)]
    by_engine: dict[str, dict[str, str]] = {}
    checks = {}
    for row in rows:
        name = row.name.removeprefix("[It] ")
        if name.startswith(CROSS_CHECK_PREFIX):
            checks[name.removeprefix(CROSS_CHECK_PREFIX)] = row
        else:
            by_engine.setdefault(name, {})[row.properties["engine"]] = row.status
    twins = {name for name, engines in by_engine.items() if set(engines) == {"native", "upstream"}}
    assert len(twins) >= 5 and set(checks) == twins
    for name in twins:
        disagree = by_engine[name]["native"] != by_engine[name]["upstream"]
        assert (checks[name].status == "failed") is disagree, (name, by_engine[name], checks[name].message)
