"""The kind target on winsuite's own node image, next to the embedded cluster: the pinned Kubernetes with kwok's
simulated Windows nodes tainted as on the embedded cluster; the default job's Linux side and upstream specs give the
rows and verdicts they give on the embedded cluster; a run inside the kind cluster, in two shards, gives the local
run's verdicts; and, reached only through its kubeconfig as a user's cluster, the README's "your cluster" line runs
the job made for such a cluster, on upstream's images."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from kubernetes import client

from tests.integration.kind_support import KindCluster
from tests.integration.kind_support import on_kind
from tests.integration.kind_support import run
from tests.integration.runner_support import Build
from tests.integration.runner_support import together
from tests.integration.runner_support import verdicts
from tests.integration.test_your_cluster import FOCUS as YOUR_CLUSTER_FOCUS
from tests.integration.test_your_cluster import HEADER
from tests.integration.test_your_cluster import OWN_REGISTRY
from tests.integration.test_your_cluster import context_of
from tests.integration.test_your_cluster import own_images_of_new_pods
from tests.integration.test_your_cluster import winsuite
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.cluster.kind import engine as engines
from winsuite.cluster.kind.nodeimage.build import INPUTS_LABEL
from winsuite.cluster.kind.nodeimage.build import image_labels
from winsuite.cluster.kubeconfig import api_client
from winsuite.cluster.kubeconfig import server_version
from winsuite.components.simnodes import FAKE_TAINT
from winsuite.components.simnodes import WINDOWS_TAINT
from winsuite.errors import ExitCode
from winsuite.inputs.pins import load_pins
from winsuite.k8s.waits import BackgroundWatch
from winsuite.policy.cluster_job import path_safe

pytestmark = [pytest.mark.kind, pytest.mark.cluster]

# 46 native tests of the default job that run on a node with containers (pods, volumes, env, probes, logs).
FOCUS = (r"\[sig-node\] (Pods|Downward API|ConfigMap|Secrets|Containers|Kubelet|Variable Expansion)"
         r"|\[sig-storage\] Downward API")
# Upstream conformance specs, most without a native port.
UPSTREAM_FOCUS = r"\[sig-node\] (PodTemplates|Lease|ConfigMap|Secrets) .*\[Conformance\]"


@pytest.fixture(scope="module")
def native_builds(kind_cluster: KindCluster, cluster: EmbeddedCluster,
                  tmp_path_factory: pytest.TempPathFactory) -> tuple[Build, Build]:
    """The default job's Linux side on the kind cluster and on the embedded one's real node, at once. The wait, once
    per module, is these two whole runs of the focus's 46 native tests."""
    if not cluster.has_real_node:
        pytest.skip(f"needs the embedded cluster's real Linux node ({cluster.real_node_reason})")
    kind, embedded = together(*(functools.partial(run, cluster_args, tmp_path_factory.mktemp(name), "--engine",
                                                  "native", "--focus", FOCUS)
                                for name, cluster_args in (("kind", on_kind(kind_cluster)),
                                                           ("embedded", ["--cluster-name", cluster.name]))))
    return kind, embedded


def taints(node: client.V1Node) -> list[dict[str, str]]:
    return [{"key": t.key, "value": t.value, "effect": t.effect} for t in node.spec.taints or []]


def test_the_cluster_serves_the_pinned_kubernetes_from_winsuites_node_image(kind_cluster: KindCluster) -> None:
    pins = load_pins()
    assert server_version(api_client(kind_cluster.kubeconfig)) == pins.kubernetes
    labels = image_labels(engines.choose(), pins.kind_node_image) or {}
    assert labels.get(INPUTS_LABEL)  # winsuite's build, found by its inputs


def test_simulated_windows_nodes_are_tainted_as_on_the_embedded_cluster(kind_cluster: KindCluster) -> None:
    nodes = {n.metadata.name: n for n in client.CoreV1Api(api_client(kind_cluster.kubeconfig)).list_node().items}
    real = nodes.pop(kind_cluster.target.layout.node)
    assert FAKE_TAINT not in taints(real) and real.status.node_info.kubelet_version == load_pins().kubernetes
    windows = [n for n in nodes.values() if n.metadata.labels["kubernetes.io/os"] == "windows"]
    assert {n.metadata.labels["node.kubernetes.io/windows-build"] for n in windows} == {"10.0.17763", "10.0.20348"}
    assert all(WINDOWS_TAINT in taints(n) for n in windows)
    assert all(FAKE_TAINT in taints(n) for n in nodes.values())
    assert all(any(c.type == "Ready" and c.status == "True" for c in n.status.conditions) for n in nodes.values())


def test_the_default_jobs_linux_side_gives_the_embedded_clusters_rows_and_verdicts(
        native_builds: tuple[Build, Build]) -> None:
    kind_build, embedded = native_builds
    assert len(verdicts(kind_build)) >= 40
    assert verdicts(kind_build) == verdicts(embedded)
    assert kind_build.finished["result"] == embedded.finished["result"]


def test_upstream_specs_give_the_embedded_clusters_verdicts(
        kind_cluster: KindCluster, real_node: EmbeddedCluster, tmp_path: Path) -> None:
    on_kind_cluster, embedded = together(*(
        functools.partial(run, cluster_args, tmp_path / name, "--engine", "upstream", "--focus", UPSTREAM_FOCUS)
        for name, cluster_args in (("kind", on_kind(kind_cluster)), ("embedded", ["--cluster-name", real_node.name]))))
    rows = verdicts(on_kind_cluster)
    assert len(rows) >= 10 and rows == verdicts(embedded)
    assert all(r.properties["engine"] == "upstream" for r in on_kind_cluster.rows())


def test_the_shards_of_a_run_inside_the_kind_cluster_give_the_local_runs_verdicts(
        kind_cluster: KindCluster, native_builds: tuple[Build, Build], tmp_path: Path) -> None:
    """The focus's 46 native tests run inside the kind cluster in two shards give the verdicts of the same run made
    from here. The wait is that whole run: winsuite's image made (cached by its inputs) and imported into the kind node
    when it is not there yet, then the shards' pods running the tests."""
    remote = run(on_kind(kind_cluster), tmp_path, "--engine", "native", "--focus", FOCUS, "--in-cluster",
                 "--shards", "2")
    assert verdicts(remote) == verdicts(native_builds[0])
    assert [s["shard"] for s in remote.finished["metadata"]["shards"]] == ["1/2", "2/2"]
    assert remote.finished["metadata"]["in-cluster"]["image"].startswith("winsuite.local/winsuite:")


def test_through_its_kubeconfig_the_kind_cluster_is_a_users_cluster(kind_cluster: KindCluster, tmp_path: Path) -> None:
    """`winsuite list` and the README's "your cluster" line given only the kind cluster's kubeconfig: the job made for
    a cluster given by --kubeconfig (named from its context, engine auto, upstream's registries: winsuite's own images
    are in this node's store, and no pod may ask for one), not the kind job."""
    kubeconfig = str(kind_cluster.kubeconfig)
    listed = winsuite("list", "--kubeconfig", kubeconfig, "--node-os", "windows")
    assert listed.returncode == ExitCode.OK and "Traceback" not in listed.stderr, listed.stderr[-2000:]
    assert "requires a node that runs Windows containers (found: 2 simulated Windows nodes)" in listed.stdout, \
        listed.stdout[-3000:]
    seen: set[str] = set()
    core = client.CoreV1Api(api_client(kind_cluster.kubeconfig))
    version = core.list_pod_for_all_namespaces(limit=1).metadata.resource_version
    with BackgroundWatch(core.list_pod_for_all_namespaces, version, violates=own_images_of_new_pods(seen)) as pods:
        done = winsuite("run", "--kubeconfig", kubeconfig, "--node-os", "windows", "--focus", YOUR_CLUSTER_FOCUS,
                        "--results-root", str(tmp_path), "--run-timeout", "10m", "-n", "2", timeout=900)
    output = done.stdout + done.stderr
    assert done.returncode == ExitCode.OK, output[-4000:]
    pods.check(f"pods with an image of {OWN_REGISTRY}")
    assert seen, "the run made no pod on the cluster: nothing was checked"
    header = HEADER.search(output)
    assert header is not None, output[-4000:]
    assert header.group(1) == f"winsuite-{path_safe(context_of(kind_cluster.kubeconfig))}-windows"
    assert header.group(2) == "the default for a cluster given by --kubeconfig; --job to choose another"
