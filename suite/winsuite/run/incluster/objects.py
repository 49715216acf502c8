"""The Kubernetes objects of a run inside the cluster: its namespace, service account and binding, the ConfigMap of
its settings, and the Indexed Job whose pods are its shards. Created in that order, deleted in the reverse."""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from winsuite.errors import UsageError
from winsuite.k8s import retry
from winsuite.k8s.api_answer import api_answer
from winsuite.k8s.namespaces import RUN_ID_LABEL
from winsuite.k8s.not_found import ignore_not_found

CONFIG_DIR = "/etc/winsuite"
RESULTS_DIR = "/results"
SERVICE_ACCOUNT = "winsuite-runner"
JOB_NAME = "winsuite-shards"
CONFIGMAP = "winsuite-run"
# The tests create namespaces, nodes' objects, RBAC, admission policies and CRDs, as e2e.test does: cluster-admin,
# bound to the run's own service account for the run only.
CLUSTER_ROLE = "cluster-admin"
INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
GRACE_SECONDS = 90  # a shard asked to stop writes its results and sends its build within this


@dataclasses.dataclass(frozen=True)
class RunObjects:
    """The names of one in-cluster run's objects (all derived from its run id)."""

    run_id: str

    @property
    def namespace(self) -> str:
        return f"winsuite-run-{self.run_id}"

    @property
    def binding(self) -> str:
        return f"winsuite-run-{self.run_id}"

    @property
    def labels(self) -> dict[str, str]:
        return {RUN_ID_LABEL: self.run_id, "app.kubernetes.io/name": "winsuite"}

    def shard_run_id(self, number: int) -> str:
        """The run id of shard `number`'s own `winsuite run`, which labels the test namespaces it creates."""
        return f"{self.run_id}-{number}"


def _meta(name: str, objects: RunObjects, namespace: str | None = None) -> client.V1ObjectMeta:
    return client.V1ObjectMeta(name=name, namespace=namespace, labels=objects.labels)


def create(api: client.ApiClient, objects: RunObjects, files: Mapping[str, str], job: dict[str, Any]) -> None:
    """The run's objects, in order; one the cluster refuses (the credentials may not create it, a quota, a policy)
    is a UsageError naming it and the API server's answer."""
    core, rbac = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
    namespace = objects.namespace
    steps: tuple[tuple[str, Callable[[], object]], ...] = (
        (f"Namespace {namespace}",
         lambda: core.create_namespace(client.V1Namespace(metadata=_meta(namespace, objects)))),
        (f"ServiceAccount {namespace}/{SERVICE_ACCOUNT}", lambda: core.create_namespaced_service_account(
            namespace, client.V1ServiceAccount(metadata=_meta(SERVICE_ACCOUNT, objects, namespace)))),
        (f"ClusterRoleBinding {objects.binding}", lambda: rbac.create_cluster_role_binding(client.V1ClusterRoleBinding(
            metadata=_meta(objects.binding, objects),
            role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=CLUSTER_ROLE),
            subjects=[client.RbacV1Subject(kind="ServiceAccount", name=SERVICE_ACCOUNT, namespace=namespace)]))),
        (f"ConfigMap {namespace}/{CONFIGMAP}", lambda: core.create_namespaced_config_map(
            namespace, client.V1ConfigMap(metadata=_meta(CONFIGMAP, objects, namespace), data=dict(files)))),
        (f"Job {namespace}/{JOB_NAME}",
         lambda: client.BatchV1Api(api).create_namespaced_job(namespace, job)),
    )
    for name, step in steps:
        try:
            retry.call(step)
        except ApiException as err:
            raise UsageError(f"--in-cluster: the cluster refused the run's {name}: {api_answer(err)}") from None


def job_manifest(objects: RunObjects, *, shards: int, image: str, nodes: list[str], deadline_seconds: int,
                 pull_policy: str) -> dict[str, Any]:
    """An Indexed Job of `shards` pods, one per shard, each on one of `nodes` (Linux nodes that run containers and
    are not under test), never retried: a shard that dies is reported as such, its unfinished tests interrupted."""
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": sorted(nodes)},
                              {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}]}}}
    container = {
        "name": "shard", "image": image, "imagePullPolicy": pull_policy,
        "args": ["shard-worker", "--config", CONFIG_DIR, "--results", RESULTS_DIR],
        "volumeMounts": [{"name": "config", "mountPath": CONFIG_DIR, "readOnly": True},
                         {"name": "results", "mountPath": RESULTS_DIR}, {"name": "tmp", "mountPath": "/tmp"}],
        "securityContext": {"runAsNonRoot": True, "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]}},
    }
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": JOB_NAME, "namespace": objects.namespace, "labels": objects.labels},
        "spec": {
            "completionMode": "Indexed", "completions": shards, "parallelism": shards,
            "backoffLimitPerIndex": 0, "maxFailedIndexes": shards, "activeDeadlineSeconds": deadline_seconds,
            "template": {
                "metadata": {"labels": objects.labels},
                "spec": {
                    "serviceAccountName": SERVICE_ACCOUNT, "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": GRACE_SECONDS, "affinity": affinity,
                    "containers": [container],
                    "volumes": [{"name": "config", "configMap": {"name": CONFIGMAP}},
                                {"name": "results", "emptyDir": {}}, {"name": "tmp", "emptyDir": {}}],
                },
            },
        },
    }


def shard_pods(api: client.ApiClient, objects: RunObjects) -> dict[int, client.V1Pod]:
    """The newest pod of each shard (by its 0-based completion index)."""
    listing = retry.call(client.CoreV1Api(api).list_namespaced_pod, objects.namespace,
                         label_selector=f"job-name={JOB_NAME}")
    pods: dict[int, client.V1Pod] = {}
    for pod in sorted(listing.items, key=lambda p: p.metadata.creation_timestamp):
        index = (pod.metadata.labels or {}).get(INDEX_LABEL)
        if index is not None and index.isdigit():
            pods[int(index)] = pod
    return pods


def job_exists(api: client.ApiClient, objects: RunObjects) -> bool:
    with ignore_not_found() as answer:
        retry.call(client.BatchV1Api(api).read_namespaced_job, JOB_NAME, objects.namespace)
    return not answer.not_found


def stop_job(api: client.ApiClient, objects: RunObjects) -> None:
    """Delete the Job and its pods (they get SIGTERM and their grace period)."""
    with contextlib.suppress(ApiException):
        client.BatchV1Api(api).delete_namespaced_job(JOB_NAME, objects.namespace, propagation_policy="Background")


def delete(api: client.ApiClient, objects: RunObjects) -> list[str]:
    """Every object of the run, its namespace last; what could not be deleted, as 'kind name: reason'."""
    problems = []
    steps: tuple[tuple[str, Callable[[], object]], ...] = (
        ("Job", lambda: client.BatchV1Api(api).delete_namespaced_job(JOB_NAME, objects.namespace,
                                                                    propagation_policy="Background")),
        ("ClusterRoleBinding", lambda: client.RbacAuthorizationV1Api(api).delete_cluster_role_binding(objects.binding)),
        ("Namespace", lambda: client.CoreV1Api(api).delete_namespace(objects.namespace)),
    )
    for kind, step in steps:
        try:
            with ignore_not_found():
                step()
        except ApiException as err:
            problems.append(f"{kind}: {err.status} {err.reason}")
    return problems


def delete_run_bindings(api: client.ApiClient, run_id: str | None = None, dry_run: bool = False,
                        spare_runs: frozenset[str] = frozenset()) -> list[str]:
    """The ClusterRoleBindings runs inside the cluster left (one run's, or every run's but `spare_runs`)."""
    selector = f"{RUN_ID_LABEL}={run_id}" if run_id else RUN_ID_LABEL
    rbac = client.RbacAuthorizationV1Api(api)
    names = [b.metadata.name for b in retry.call(rbac.list_cluster_role_binding, label_selector=selector).items
             if (b.metadata.labels or {}).get(RUN_ID_LABEL) not in spare_runs]
    if not dry_run:
        for name in names:
            with contextlib.suppress(ApiException):
                rbac.delete_cluster_role_binding(name)
    return names


def shard_runs_of(api: client.ApiClient, run_id: str) -> list[str]:
    """The run ids of a run's shards that labelled namespaces (`<run id>-<shard>`)."""
    listed = retry.call(client.CoreV1Api(api).list_namespace, label_selector=RUN_ID_LABEL).items
    shard = re.compile(re.escape(run_id) + r"-\d+")
    return sorted({value for ns in listed if shard.fullmatch(value := (ns.metadata.labels or {})[RUN_ID_LABEL])})
