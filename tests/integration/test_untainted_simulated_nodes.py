"""No pass without a real placement, on the embedded cluster with simulated nodes as `kwokctl scale node` makes them:
kwok's annotation, no taint. Container tests' pods land on the real node only; a container test whose pod could only
be on a simulated node does not pass (it fails naming the node, or, with the real node cordoned, is skipped);
a pod watch refused by RBAC leaves a row's placement unknown, said in the row."""

from __future__ import annotations

import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes import config as kube_config
from kubernetes import watch

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import Build
from tests.integration.runner_support import only_build
from tests.integration.runner_support import service_account_kubeconfig
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.targeting import Placement
from winsuite.cluster.embedded.config import REAL_NODE_NAME
from winsuite.components import simnodes
from winsuite.errors import ExitCode
from winsuite.inputs.pins import load_pins
from winsuite.k8s import namespaces
from winsuite.k8s import waits
from winsuite.k8s.namespaces import E2E_FRAMEWORK_LABEL
from winsuite.k8s.not_found import ignore_not_found
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.run.engines import placement_policy
from winsuite.run.evidence import Evidence
from winsuite.run.observations import NODES
from winsuite.run.observations import PODS
from winsuite.run.observations import Observer

# It adds nodes without kwok's taint and cordons the real node: other tests' pods would land elsewhere meanwhile.
pytestmark = [pytest.mark.cluster, pytest.mark.runs_alone]

UNTAINTED = ("untainted-linux-0", "untainted-linux-1")
UNTAINTED_SELECTOR = f"kubernetes.io/hostname in ({','.join(UNTAINTED)})"
EVIDENCE_CASES = "tests.evidence_cases"
CONTAINER_TESTS = (r"\[sig-node\] Pods should get a host IP|"
                   r"\[sig-node\] ConfigMap should be consumable via environment variable \[NodeConformance\]|"
                   r"\[sig-apps\] ReplicaSet should serve a basic image on each replica with a public image|"
                   r"\[sig-apps\] Daemon set \[Serial\] should run and stop simple daemon")
BOUND_TO_SIMULATED = "runs its container on the simulated node it is bound to"


def untainted_node(name: str) -> dict[str, Any]:
    """A simulated Linux node as kwok's users add them: kwok's annotation, its OS labels, no taint."""
    (made,) = simnodes.manifests(simnodes.ClusterConfig(windows_builds=(), linux_simulated=1), load_pins().kubernetes)
    made["metadata"]["name"] = made["metadata"]["labels"]["kubernetes.io/hostname"] = name
    made["spec"]["taints"] = [t for t in made["spec"]["taints"] if t != simnodes.FAKE_TAINT]
    assert not made["spec"]["taints"] and made["metadata"]["annotations"][simnodes.FAKE_ANNOTATION] == "fake"
    return made


def ready(node: client.V1Node) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in (node.status.conditions or []))


@pytest.fixture
def untainted(real_node: EmbeddedCluster) -> Iterator[EmbeddedCluster]:
    """Two untainted simulated Linux nodes, Ready (kwok manages every node with its annotation); deleted after."""
    core = client.CoreV1Api(real_node.api)
    try:
        for name in UNTAINTED:
            core.create_node(untainted_node(name))
        for name in UNTAINTED:
            waits.wait_for(core.list_node, name=name, namespace=None, what=f"kwok to make {name} Ready",
                           condition=ready, timeout=60)
        yield real_node
    finally:
        for name in UNTAINTED:
            with ignore_not_found():
                core.delete_node(name)
        waits.wait_for_set(core.list_node, namespace=None, label_selector=UNTAINTED_SELECTOR,
                           what="the untainted simulated nodes to go", condition=lambda nodes: not nodes, timeout=60)


class PodRecorder:
    """Every pod bound in a namespace that did not exist when recording started, with its node, as a watch sees it
    (the run deletes its namespaces before it ends)."""

    def __init__(self, api: client.ApiClient) -> None:
        self.core = client.CoreV1Api(api)
        self.before = {ns.metadata.name for ns in self.core.list_namespace().items}
        self.bound: dict[tuple[str, str], str] = {}
        self.error: BaseException | None = None
        self._stopped = threading.Event()
        self._watch = watch.Watch()
        self._thread = threading.Thread(target=self._record, daemon=True)

    def __enter__(self) -> PodRecorder:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        self._watch.stop()
        self._thread.join(timeout=30)
        assert self.error is None, f"the pod watch failed while the run ran: {self.error!r}"

    def _record(self) -> None:
        try:
            for event in self._watch.stream(self.core.list_pod_for_all_namespaces, timeout_seconds=900):
                pod = event["object"]
                if pod.metadata.namespace not in self.before and pod.spec.node_name:
                    self.bound[(pod.metadata.namespace, pod.metadata.name)] = pod.spec.node_name
        except Exception as err:  # stopping the watch ends its response abruptly; before that, it is a failure
            if not self._stopped.is_set():
                self.error = err


def run(cluster: EmbeddedCluster, root: Path, *extra: str) -> tuple[int, str, Build]:
    done = subprocess.run([*WINSUITE, "run", "--job", "embedded", "--kubeconfig", str(cluster.kubeconfig),
                           "--results-root", str(root), "--node-os", "linux", "-n", "2", *extra], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=900, check=False)
    return done.returncode, done.stdout + done.stderr, only_build(root)


def rows(build: Build) -> dict[str, dict[str, str]]:
    return {row.name.removeprefix("[It] "): {"status": row.status, "message": row.message, **row.properties}
            for junit in ("junit_01.xml", "junit_02.xml") if (build.path / "artifacts" / junit).exists()
            for row in build.rows(junit)}


def test_container_tests_pods_land_only_on_the_real_node(untainted: EmbeddedCluster, tmp_path: Path) -> None:
    """The scheduler would put pods on the empty untainted nodes, and the DaemonSet controller one on each: the
    placement's node affinity keeps every pod on the real node, and discovery warns of the nodes."""
    with PodRecorder(untainted.api) as recorder:
        code, output, build = run(untainted, tmp_path, "--focus", CONTAINER_TESTS)
    assert code == ExitCode.OK, output
    assert "2 simulated node(s) without kwok's taint kwok.x-k8s.io/node (untainted-linux-0, untainted-linux-1)" \
        in output, output
    found = rows(build)
    assert len(found) == 4 and all(r["status"] == "passed" and r["ran-on"].startswith(f"{REAL_NODE_NAME} (linux")
                                   for r in found.values()), found
    # The host-IP and ConfigMap pods, the ReplicaSet's and the daemon's: one namespace per test, all on the real node.
    assert len({namespace for namespace, _ in recorder.bound}) == 4, recorder.bound
    assert set(recorder.bound.values()) == {REAL_NODE_NAME}, recorder.bound


def test_a_container_test_bound_to_a_simulated_node_fails_naming_it(untainted: EmbeddedCluster,
                                                                    tmp_path: Path) -> None:
    code, output, build = run(untainted, tmp_path, "--cases", EVIDENCE_CASES, "--focus", BOUND_TO_SIMULATED)
    assert code == ExitCode.TESTS_FAILED, output
    (row,) = rows(build).values()
    assert row["status"] == "failed" and row["failure-class"] == "infrastructure", row
    assert row["message"] == ("infrastructure: placement: the test needs a node that runs containers, and its 1 "
                              "pod(s) were bound only to simulated nodes, which run nothing: linux-sim-0"), row
    assert row.get("ran-on", "") == "", row


def test_with_the_real_node_cordoned_container_tests_are_skipped_not_passed(untainted: EmbeddedCluster,
                                                                           tmp_path: Path) -> None:
    """Only simulated nodes could take the pods: nothing is placed, and no row passes."""
    core = client.CoreV1Api(untainted.api)
    core.patch_node(REAL_NODE_NAME, {"spec": {"unschedulable": True}})
    try:
        code, output, build = run(untainted, tmp_path, "--focus", CONTAINER_TESTS)
    finally:
        core.patch_node(REAL_NODE_NAME, {"spec": {"unschedulable": False}})
    found = rows(build)
    assert len(found) == 4, (found, output)
    for row in found.values():
        assert row["status"] == "skipped", row
        assert row["message"].startswith("requires a node that runs Linux containers (found: "), row
        assert "1 not Ready or cordoned" in row["message"], row
    assert code == ExitCode.OK, output


def test_the_upstream_placement_policy_keeps_e2e_pods_off_untainted_simulated_nodes(untainted: EmbeddedCluster
                                                                                  ) -> None:
    """Pods of upstream's e2e namespaces, with and without node affinity of their own, land on the real node only:
    the policy ANDs the exclusion of every simulated node into each of their node selector terms."""
    api, core = untainted.api, client.CoreV1Api(untainted.api)
    run_id = f"untainted{uuid.uuid4().hex[:6]}"
    namespace = f"e2e-{run_id}"
    zone_term = {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}
    pause = [{"name": "c", "image": "pause"}]  # only where it is bound is looked at
    manifests: list[dict[str, Any]] = [{"metadata": {"name": f"plain-{i}"}, "spec": {"containers": pause}}
                                       for i in range(3)]
    manifests.append({"metadata": {"name": "own-affinity"}, "spec": {
        "containers": pause, "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [zone_term]}}}}})
    assert placement_policy.install(api, run_id, Placement("linux", windows_taint=None))
    try:
        core.create_namespace({"metadata": {"name": namespace, "labels": {E2E_FRAMEWORK_LABEL: "untainted"}}})
        waits.poll("the placement policy to apply", lambda: _check(
            core.create_namespaced_pod(namespace, manifests[0], dry_run="All").spec.affinity is not None),
            timeout=30, interval=0.5)
        for manifest in manifests:
            core.create_namespaced_pod(namespace, manifest)
        placed = waits.wait_for_set(core.list_namespaced_pod, namespace=namespace, label_selector="",
                                    what="the e2e pods to be bound", timeout=120,
                                    condition=lambda items: len(items) == 4 and all(p.spec.node_name for p in items))
    finally:
        placement_policy.remove(api, run_id)
        namespaces.delete(api, namespace)
    assert {p.metadata.name: p.spec.node_name for p in placed} == {m["metadata"]["name"]: REAL_NODE_NAME
                                                                    for m in manifests}
    own = next(p for p in placed if p.metadata.name == "own-affinity")
    (term,) = own.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms
    assert term.match_expressions[0].key == "kubernetes.io/os"
    assert {f.values[0] for f in term.match_fields} >= set(UNTAINTED), term


def test_a_pod_watch_refused_by_rbac_leaves_a_rows_placement_unknown(cluster: EmbeddedCluster,
                                                                     tmp_path: Path) -> None:
    """An account that may watch nodes and Leases but not pods: the observer's pod watch is refused, and a passed
    row says its placement is unknown, in the API server's own words."""
    role = f"winsuite-nodes-and-leases-{uuid.uuid4().hex[:6]}"
    rbac = client.RbacAuthorizationV1Api(cluster.api)
    rbac.create_cluster_role(client.V1ClusterRole(metadata=client.V1ObjectMeta(name=role), rules=[
        client.V1PolicyRule(api_groups=[""], resources=["nodes"], verbs=["get", "list", "watch"]),
        client.V1PolicyRule(api_groups=["coordination.k8s.io"], resources=["leases"], verbs=["get", "list", "watch"])]))
    try:
        with service_account_kubeconfig(cluster, tmp_path, f"{role}-ns", "no-pods", [role]) as kubeconfig:
            api = kube_config.new_client_from_config(config_file=str(kubeconfig))
            with Observer(api) as observer:
                waits.poll("the pod watch refused and a Lease seen",
                           lambda: _check(bool(observer.blind.get(PODS) and observer.renewals)), timeout=60,
                           interval=0.5)
                started = time.time()
                time.sleep(1)
                row = Attempt("[sig-node] a test", "t::a", Outcome.PASSED, duration=time.time() - started,
                              namespaces=("somewhere",), started=started)
                judged = Evidence(observer, ClusterFacts("", "", [], False, False, [], False, []), "linux").judge(row)
                unseen = Evidence(observer, ClusterFacts("", "", [], False, False, [], False, []), "linux").unseen()
    finally:
        rbac.delete_cluster_role(role)
    assert judged.outcome is Outcome.PASSED, judged
    assert judged.message.startswith("placement unknown: the pods watch did not see from "), judged
    assert (f'403 Forbidden: pods is forbidden: User "system:serviceaccount:{role}-ns:no-pods" cannot list resource '
            '"pods" in API group "" at the cluster scope') in judged.message, judged
    assert judged.properties.failure_evidence == judged.message
    assert NODES not in observer.blind and len(unseen) == 1 and unseen[0].startswith("the pods watch did not see"), \
        unseen


def _check(condition: bool) -> None:
    assert condition
