"""`winsuite run --in-cluster` on the embedded cluster: the shards as the pods of an Indexed Job running winsuite's
locally made image on the real node, compared with the same focus run here; a shard killed mid-run; detach and
attach; nothing of the run left in the cluster."""

from __future__ import annotations

import functools
import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import Build
from tests.integration.runner_support import only_build
from tests.integration.runner_support import together
from tests.integration.runner_support import verdicts
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.cluster.embedded.realnode.containerd import Containerd
from winsuite.cluster.embedded.realnode.containerd import import_images
from winsuite.cluster.embedded.state import Layout
from winsuite.components.ociimage import Entry
from winsuite.components.ociimage import ImageSpec
from winsuite.components.ociimage import Layer
from winsuite.components.ociimage import write_archive
from winsuite.errors import ExitCode
from winsuite.run.incluster.objects import INDEX_LABEL
from winsuite.run.incluster.objects import RunObjects
from winsuite.run.incluster.state import InClusterState

pytestmark = [pytest.mark.cluster, pytest.mark.real_node]

# 46 native tests that run on the real node.
FOCUS = (r"\[sig-node\] (Pods|Downward API|ConfigMap|Secrets|Containers|Kubelet|Variable Expansion)"
         r"|\[sig-storage\] Downward API")
SMALL_FOCUS = r"\[sig-storage\] Downward API"
TIMEOUT = 1500


def winsuite(cluster: EmbeddedCluster, root: Path, *extra: str) -> list[str]:
    return [*WINSUITE, "run", "--cluster-name", cluster.name, "--node-os", "linux", "--engine", "native",
            "--results-root", str(root), "-n", "2", *extra]


def left_in_cluster(cluster: EmbeddedCluster, build: Build, within: float = 120.0) -> list[str]:
    """The run's namespace, binding and shard namespaces still there after `within` seconds."""
    run_id = build.started["metadata"]["run-id"]
    objects = RunObjects(run_id)
    core, rbac = client.CoreV1Api(cluster.api), client.RbacAuthorizationV1Api(cluster.api)
    deadline = time.monotonic() + within
    while True:
        left = [ns.metadata.name for ns in core.list_namespace().items
                if ns.metadata.name == objects.namespace
                or (ns.metadata.labels or {}).get("winsuite.io/run-id", "").startswith(f"{run_id}-")]
        try:
            rbac.read_cluster_role_binding(objects.binding)
            left.append(f"clusterrolebinding {objects.binding}")
        except ApiException as err:
            assert err.status == 404
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(2)


@pytest.fixture(scope="module")
def local_and_in_cluster(cluster: EmbeddedCluster, tmp_path_factory: pytest.TempPathFactory) -> tuple[Build, Build]:
    """The focus's 46 native tests run here and inside the cluster in two shards, at once. The wait, once per module,
    is the two whole runs: the in-cluster one makes winsuite's image (cached by its inputs), imports it into the real
    node's containerd when it is not there yet, and follows its shards' pods through the tests."""
    if not cluster.has_real_node:
        pytest.skip(f"needs the embedded cluster's real Linux node ({cluster.real_node_reason})")
    real_node = cluster
    local_root, remote_root = tmp_path_factory.mktemp("local"), tmp_path_factory.mktemp("in-cluster")
    _, done = together(*(functools.partial(subprocess.run, argv, cwd=PROJECT_ROOT, capture_output=True, text=True,
                                           timeout=TIMEOUT, check=False)
                         for argv in (winsuite(real_node, local_root, "--focus", FOCUS),
                                      winsuite(real_node, remote_root, "--focus", FOCUS, "--in-cluster", "--shards",
                                               "2"))))
    assert "2 shard(s)" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    return only_build(local_root), only_build(remote_root)


def test_the_shards_give_the_rows_and_verdicts_of_the_local_run(local_and_in_cluster: tuple[Build, Build]) -> None:
    local, remote = local_and_in_cluster
    assert len(verdicts(local)) >= 40
    assert verdicts(remote) == verdicts(local)
    assert remote.finished["result"] == local.finished["result"]
    shards = remote.finished["metadata"]["shards"]
    assert [s["shard"] for s in shards] == ["1/2", "2/2"]
    assert all("build" not in s for s in shards)  # received from its pod, read in memory: no directory to name
    assert remote.started["metadata"]["node-os"] == "linux"
    assert remote.finished["metadata"]["in-cluster"]["image"].startswith("winsuite.local/winsuite:")


def test_nothing_of_the_in_cluster_run_is_left(real_node: EmbeddedCluster,
                                               local_and_in_cluster: tuple[Build, Build]) -> None:
    """The fixture's in-cluster run leaves neither its namespace, nor its shards' namespaces, nor its binding. The wait
    is the namespace controller deleting those namespaces and the pods in them, polled for up to 120 s."""
    assert left_in_cluster(real_node, local_and_in_cluster[1]) == []


def test_a_shard_killed_mid_run_fails_the_build_with_its_unfinished_tests_interrupted(
        real_node: EmbeddedCluster, tmp_path: Path) -> None:
    # One test at a time per shard, so the shard with the most tests is still busy when its pod is killed (the plan,
    # cut by the tests' recorded durations, can give the other shard one long test, over by the first row).
    process = subprocess.Popen(winsuite(real_node, tmp_path, "--focus", SMALL_FOCUS, "--in-cluster", "--shards", "2",
                                        "-n", "1"),
                               cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    output = []
    for line in process.stdout:  # the first row: the shards are running their tests
        output.append(line)
        if line.startswith("[1/"):
            break
    build_dir = next(tmp_path.glob("*/*/started.json")).parent
    objects = RunObjects(json.loads((build_dir / "started.json").read_text())["metadata"]["run-id"])
    plan = InClusterState.load(build_dir).shards
    busiest = max(range(len(plan)), key=lambda index: len(plan[index]))
    lost = f"shard {busiest + 1}/2 lost"
    core = client.CoreV1Api(real_node.api)
    (pod,) = core.list_namespaced_pod(objects.namespace, label_selector=f"{INDEX_LABEL}={busiest}").items
    core.delete_namespaced_pod(pod.metadata.name, objects.namespace, grace_period_seconds=0)
    rest, _ = process.communicate(timeout=TIMEOUT)
    text = "".join(output) + rest
    assert process.returncode == ExitCode.TESTS_FAILED, text[-3000:]
    build = only_build(tmp_path)
    assert build.finished["result"] == "FAILURE"
    rows = verdicts(build)
    interrupted = [r for r in build.rows() if r.properties.get("interrupted") == "true"]
    assert interrupted, text[-3000:]
    assert all(lost in r.message for r in interrupted), [(r.name, r.message) for r in interrupted]
    assert len(rows) == 11  # every test of the focus has its row: none is silently missing
    assert lost in text
    # A failed run brings the nodes' logs of its window, fetched from here (the shards collect none).
    assert build.finished["metadata"]["node-logs"] == "artifacts/nodes/"
    assert (build.path / "artifacts" / "nodes" / "linux-0" / "collection.txt").is_file()
    assert left_in_cluster(real_node, build) == []


def test_a_shard_whose_container_cannot_start_says_why(real_node: EmbeddedCluster, tmp_path: Path) -> None:
    # An image whose entrypoint is missing: the runtime refuses to start it, and the run says so in every row.
    ref = "winsuite.local/cannot-start:1"
    write_archive(ImageSpec(names=(ref,), layers=(Layer("empty", (Entry("/tmp", 0o1777),)),),
                            entrypoint=("/no/such/program",), user="65532"), tmp_path / "cannot-start.tar")
    import_images(Containerd(Layout(real_node.name).node / "containerd"), [tmp_path / "cannot-start.tar"])
    root = tmp_path / "results"
    done = subprocess.run(winsuite(real_node, root, "--focus", SMALL_FOCUS, "--in-cluster", "--image", ref),
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, check=False)
    text = done.stdout + done.stderr
    assert done.returncode == ExitCode.TESTS_FAILED, text[-3000:]
    build = only_build(root)
    assert build.finished["result"] == "FAILURE"
    rows = build.rows()
    assert len(rows) == 11 and all(r.properties.get("interrupted") == "true" for r in rows)
    assert all("could not start its container" in r.message and "/no/such/program" in r.message for r in rows), \
        rows[0].message
    assert left_in_cluster(real_node, build) == []


def test_detach_then_attach_yields_the_build(real_node: EmbeddedCluster,
                                             local_and_in_cluster: tuple[Build, Build], tmp_path: Path) -> None:
    """A run of the 11 Downward API tests in two shards, detached and then attached, gives a build with the local
    run's verdicts. The wait is that whole in-cluster run, which `attach` follows to its end, and the deletion of its
    namespaces after it."""
    detached = subprocess.run(winsuite(real_node, tmp_path, "--focus", SMALL_FOCUS, "--in-cluster", "--shards", "2",
                                       "--detach"), cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600,
                              check=False)
    assert detached.returncode == 0, detached.stdout[-2000:] + detached.stderr[-2000:]
    command = next(line for line in detached.stdout.splitlines() if "winsuite attach " in line)
    build_dir = command.split("winsuite attach ", 1)[1].strip()
    attached = subprocess.run([*WINSUITE, "attach", build_dir], cwd=PROJECT_ROOT, capture_output=True, text=True,
                              timeout=TIMEOUT, check=False)
    assert attached.returncode == 0, attached.stdout[-3000:] + attached.stderr[-3000:]
    build = Build(Path(build_dir))
    local = verdicts(local_and_in_cluster[0])
    assert verdicts(build) == {name: local[name] for name in verdicts(build)}
    assert len(verdicts(build)) == 11
    assert build.finished["result"] == "SUCCESS"
    assert left_in_cluster(real_node, build) == []


def test_sigint_stops_the_job_keeps_what_finished_and_deletes_everything(real_node: EmbeddedCluster,
                                                                         tmp_path: Path) -> None:
    process = subprocess.Popen(winsuite(real_node, tmp_path, "--focus", SMALL_FOCUS, "--in-cluster", "--shards", "2",
                                        "-n", "1"),
                               cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    output = []
    for line in process.stdout:
        output.append(line)
        if line.startswith("[1/"):
            break
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=600)
    text = "".join(output) + rest
    assert process.returncode == ExitCode.INTERRUPTED, text[-3000:]
    build = only_build(tmp_path)
    assert build.finished["result"] == "ABORTED"
    rows = build.rows()
    assert len({r.name for r in rows}) == 11
    assert any(r.status == "passed" for r in rows)  # what finished before the signal is kept
    assert any(r.properties.get("interrupted") == "true" for r in rows)
    assert left_in_cluster(real_node, build) == []


def test_a_signal_while_the_job_is_made_still_ends_the_run_with_its_results(real_node: EmbeddedCluster,
                                                                            tmp_path: Path) -> None:
    """SIGINT as soon as started.json is written, while the run's namespace, binding, ConfigMap and Job are being made:
    the run ends ABORTED with a row for each of its 11 tests and leaves nothing. The wait is the run's start up to
    started.json, its clean-up after the signal, and the namespace controller deleting its namespaces."""
    process = subprocess.Popen(winsuite(real_node, tmp_path, "--focus", SMALL_FOCUS, "--in-cluster", "--shards", "2"),
                               cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # The moment started.json is written: the run's namespace, binding, ConfigMap and Job are being made.
        deadline = time.monotonic() + 600
        while not any(tmp_path.rglob("started.json")) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        process.send_signal(signal.SIGINT)
        text, _ = process.communicate(timeout=600)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == ExitCode.INTERRUPTED, text[-3000:]
    build = only_build(tmp_path)
    assert build.finished["result"] == "ABORTED"
    assert "SIGINT" in build.finished["metadata"]["interrupted"]
    assert len({r.name for r in build.rows()}) == 11
    assert left_in_cluster(real_node, build) == []


REFUSED = "no-winsuite-jobs"


@pytest.fixture
def jobs_of_runs_refused(real_node: EmbeddedCluster) -> Iterator[str]:
    """An admission policy that refuses the run's Job (the last of its objects), as a cluster's policy might."""
    admission = client.AdmissionregistrationV1Api(real_node.api)
    message = "runs inside this cluster are not allowed"
    admission.create_validating_admission_policy({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": REFUSED},
        "spec": {"failurePolicy": "Fail", "validations": [{"expression": "false", "message": message}],
                 "matchConstraints": {"resourceRules": [{"apiGroups": ["batch"], "apiVersions": ["v1"],
                                                         "operations": ["CREATE"], "resources": ["jobs"]}]}}})
    admission.create_validating_admission_policy_binding({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": REFUSED},
        "spec": {"policyName": REFUSED, "validationActions": ["Deny"],
                 "matchResources": {"objectSelector": {"matchLabels": {"app.kubernetes.io/name": "winsuite"}}}}})
    try:
        probe = {"apiVersion": "batch/v1", "kind": "Job",
                 "metadata": {"name": "probe", "labels": {"app.kubernetes.io/name": "winsuite"}},
                 "spec": {"template": {"spec": {"restartPolicy": "Never",
                                                "containers": [{"name": "c", "image": "probe"}]}}}}
        deadline = time.monotonic() + 60
        while True:  # the policy is enforced once the API server has read it
            try:
                client.BatchV1Api(real_node.api).create_namespaced_job("default", probe, dry_run="All")
            except ApiException as err:
                if message in str(err.body):
                    break
            assert time.monotonic() < deadline, "the admission policy was not enforced within 60 s"
            time.sleep(0.5)
        yield message
    finally:
        admission.delete_validating_admission_policy_binding(REFUSED)
        admission.delete_validating_admission_policy(REFUSED)


def test_a_run_whose_job_the_cluster_refuses_ends_saying_so_and_leaves_nothing(
        real_node: EmbeddedCluster, tmp_path: Path, jobs_of_runs_refused: str) -> None:
    done = subprocess.run(winsuite(real_node, tmp_path, "--focus", SMALL_FOCUS, "--in-cluster"),
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    text = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == ExitCode.USAGE_ERROR, text
    assert "internal error" not in text and "Traceback" not in text
    said = [line for line in text.splitlines() if line.startswith("winsuite: error:")]
    assert said and "the cluster refused the run's Job winsuite-run-" in said[0] and jobs_of_runs_refused in said[0]
    build = only_build(tmp_path)
    assert build.finished["result"] == "FAILURE" and build.finished["passed"] is False
    assert jobs_of_runs_refused in build.finished["metadata"]["error"]
    assert left_in_cluster(real_node, build) == []


def test_the_run_timeout_stops_a_run_inside_the_cluster_and_exits_as_a_run_here_does(real_node: EmbeddedCluster,
                                                                                      tmp_path: Path) -> None:
    """`--run-timeout 30s` ends an in-cluster run as it ends a run here: exit code TIMED_OUT, ABORTED, the cut-off rows
    classed timeout. The wait is the run timeout of 30 s, which must come while the shards are still testing, and the
    clean-up of the run's namespaces after it."""
    # One worker a shard: its 23 tests take a minute or more (two minutes of test time in all; at two workers a
    # shard, a quiet machine ran all 46 within 45 s), so the timeout cuts the shards off while they test.
    done = subprocess.run(winsuite(real_node, tmp_path, "--focus", FOCUS, "--in-cluster", "--shards", "2", "-n", "1",
                                   "--run-timeout", "30s"),
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    text = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == ExitCode.TIMED_OUT, text
    build = only_build(tmp_path)
    assert build.finished["result"] == "ABORTED"
    assert "run timeout of 30s reached" in build.finished["metadata"]["interrupted"]
    interrupted = [r for r in build.rows() if r.properties.get("interrupted") == "true"]
    assert interrupted
    # Whether a shard had begun the test (its own row, "SIGTERM received") or not, the run's timeout cut it off.
    assert all(r.properties.get("failure-class") == "timeout"
               and r.properties.get("failure-evidence") == "interrupted: run timeout of 30s reached"
               and r.message.startswith("timeout: ") for r in interrupted), [(r.name, r.message) for r in interrupted]
    assert left_in_cluster(real_node, build) == []
