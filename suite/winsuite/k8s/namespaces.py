"""Namespaces: one per test, labelled with the run id, deleted without waiting; cleanup of interrupted runs."""

from __future__ import annotations

import re

from kubernetes import client

from winsuite.k8s import retry
from winsuite.k8s.not_found import ignore_not_found
from winsuite.k8s.waits import wait_for_set

RUN_ID_LABEL = "winsuite.io/run-id"
# Upstream's e2e framework labels every namespace it creates with these (e2e-run is the e2e.test process's run id).
E2E_FRAMEWORK_LABEL = "e2e-framework"
TEST_ANNOTATION = "winsuite.io/test"
PRIVILEGED_LABELS = {f"pod-security.kubernetes.io/{m}": "privileged" for m in ("enforce", "audit", "warn")}


def name_for(test_name: str, suffix: str) -> str:
    """A DNS-1123 namespace name derived from the test, e.g. 'pods-should-get-a-host-ip-1a2b'."""
    words = re.sub(r"\[[^\]]*\]", " ", test_name).lower()
    base = re.sub(r"[^a-z0-9]+", "-", words).strip("-")[: 62 - len(suffix) - 1].strip("-") or "test"
    return f"{base}-{suffix}"


def create(api: client.ApiClient, name: str, run_id: str, test_name: str) -> client.V1Namespace:
    body = client.V1Namespace(metadata=client.V1ObjectMeta(
        name=name, labels={RUN_ID_LABEL: run_id}, annotations={TEST_ANNOTATION: test_name[:4000]},
    ))
    return retry.call(client.CoreV1Api(api).create_namespace, body)


def delete(api: client.ApiClient, name: str) -> None:
    """Start deleting; the namespace controller finishes in the background."""
    with ignore_not_found():
        retry.call(client.CoreV1Api(api).delete_namespace, name,
                   body=client.V1DeleteOptions(propagation_policy="Background"))


def delete_run_namespaces(api: client.ApiClient, run_id: str | None = None, dry_run: bool = False,
                          spare_runs: frozenset[str] = frozenset()) -> list[str]:
    """Delete the namespaces of one run (or of every winsuite run but `spare_runs`) not already going; return
    their names."""
    selector = f"{RUN_ID_LABEL}={run_id}" if run_id else RUN_ID_LABEL
    namespaces = retry.call(client.CoreV1Api(api).list_namespace, label_selector=selector).items
    names = [ns.metadata.name for ns in namespaces
             if ns.status.phase != "Terminating" and ns.metadata.labels.get(RUN_ID_LABEL) not in spare_runs]
    if not dry_run:
        for name in names:
            delete(api, name)
    return names


def of_run(api: client.ApiClient, run_id: str) -> set[str]:
    """Every namespace of one run, terminating ones included."""
    listing = retry.call(client.CoreV1Api(api).list_namespace, label_selector=f"{RUN_ID_LABEL}={run_id}")
    return {ns.metadata.name for ns in listing.items}


def e2e_namespaces(api: client.ApiClient) -> set[str]:
    """The namespaces upstream e2e.test created (and has not deleted yet)."""
    listed = retry.call(client.CoreV1Api(api).list_namespace, label_selector=E2E_FRAMEWORK_LABEL).items
    return {ns.metadata.name for ns in listed}


def delete_e2e_namespaces(api: client.ApiClient, keep: set[str], timeout: float) -> list[str]:
    """Delete e2e.test's namespaces except `keep` (those there before the run), and wait until they are gone."""
    left = sorted(e2e_namespaces(api) - keep)
    for name in left:
        delete(api, name)
    wait_for_set(
        client.CoreV1Api(api).list_namespace, namespace=None, label_selector=E2E_FRAMEWORK_LABEL,
        what="the run's e2e.test namespaces to be deleted", timeout=timeout,
        condition=lambda items: not any(n.metadata.name in left for n in items),
        describe=lambda items: f"still there: {', '.join(n.metadata.name for n in items if n.metadata.name in left)}",
    )
    return left


def allow_privileged_pods(api: client.ApiClient, namespace: str) -> None:
    """f.NamespacePodSecurityLevel = LevelPrivileged: HostProcess and hostPath pods pass Pod Security."""
    retry.call(client.CoreV1Api(api).patch_namespace, namespace, {"metadata": {"labels": PRIVILEGED_LABELS}})
