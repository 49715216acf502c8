"""Whether the cluster implements Services of type LoadBalancer, decided by what it does: a LoadBalancer Service that
already has an ingress address, or else (when a selected test needs one) a probe Service that gets an address within
a bound. Never guessed from the nodes' providerIDs: bare-metal implementations set none, and a cloud node says
nothing of whether its LoadBalancer controller runs."""

from __future__ import annotations

import uuid
from typing import Any

from kubernetes import client

from winsuite.k8s import retry
from winsuite.k8s.namespaces import RUN_ID_LABEL
from winsuite.k8s.not_found import ignore_not_found
from winsuite.k8s.waits import WaitTimeout
from winsuite.k8s.waits import wait_for

PROBE_TIMEOUT = 60.0  # MetalLB and the embedded cluster's controller answer in seconds; clouds within a minute
PROBE_NAMESPACE = "default"
PROBE_PREFIX = "winsuite-lb-probe-"
NOT_PROBED = "no Service of type LoadBalancer has an ingress address (no probe: no selected test needs one)"


def _ingress(service: Any) -> str:
    status = service.status.load_balancer if service.status else None
    return ", ".join(i.ip or i.hostname for i in (status.ingress or []) if i.ip or i.hostname) if status else ""


def existing_evidence(core: client.CoreV1Api) -> str:
    """'Service ns/name has ingress 10.244.0.240' for a LoadBalancer Service with an address, else ''."""
    for service in retry.call(core.list_service_for_all_namespaces).items:
        if service.spec.type == "LoadBalancer" and _ingress(service):
            return f"Service {service.metadata.namespace}/{service.metadata.name} has ingress {_ingress(service)}"
    return ""


def probe_service(name: str, run_id: str | None) -> dict[str, Any]:
    """A probe: a LoadBalancer Service that selects nothing. A run's carries its run label, so that `winsuite cleanup`
    finds the one a run killed while probing left."""
    labels = {"app.kubernetes.io/name": "winsuite-lb-probe", **({RUN_ID_LABEL: run_id} if run_id else {})}
    return {"metadata": {"name": name, "labels": labels},
            "spec": {"type": "LoadBalancer", "ports": [{"port": 80, "protocol": "TCP"}]}}


def probe(core: client.CoreV1Api, timeout: float = PROBE_TIMEOUT, *, run_id: str | None = None) -> tuple[str, str]:
    """(evidence, '') when a new LoadBalancer Service gets an ingress address within `timeout`, else ('', what was
    seen). The probe Service (of run `run_id`) is deleted either way (its implementation then removes the load
    balancer)."""
    name = f"{PROBE_PREFIX}{uuid.uuid4().hex[:6]}"
    retry.call(core.create_namespaced_service, PROBE_NAMESPACE, probe_service(name, run_id))
    try:
        served = wait_for(core.list_namespaced_service, name=name, namespace=PROBE_NAMESPACE,
                          what=f"LoadBalancer Service {PROBE_NAMESPACE}/{name} to get an ingress address",
                          condition=lambda svc: bool(_ingress(svc)), timeout=timeout,
                          describe=lambda svc: repr(svc.status.load_balancer))
    except WaitTimeout:
        return "", f"a probe LoadBalancer Service got no ingress address within {timeout:.0f}s"
    finally:
        delete_probe(core, name)
    return f"a probe LoadBalancer Service got ingress {_ingress(served)}", ""


def observe(core: client.CoreV1Api, *, probe_timeout: float, run_id: str | None) -> tuple[str, str]:
    """(evidence, '') or ('', why there is none): existing Services first, then a probe (of run `run_id`) when
    `probe_timeout` > 0."""
    evidence = existing_evidence(core)
    if evidence:
        return evidence, ""
    if probe_timeout <= 0:
        return "", NOT_PROBED
    return probe(core, probe_timeout, run_id=run_id)


def runs_probes(core: client.CoreV1Api) -> dict[str, str]:
    """The probe Services runs left (killed while probing), by name: the run id each carries."""
    listed = retry.call(core.list_namespaced_service, PROBE_NAMESPACE, label_selector=RUN_ID_LABEL).items
    return {s.metadata.name: s.metadata.labels[RUN_ID_LABEL] for s in listed
            if s.metadata.name.startswith(PROBE_PREFIX)}


def delete_probe(core: client.CoreV1Api, name: str) -> None:
    with ignore_not_found():
        retry.call(core.delete_namespaced_service, name, PROBE_NAMESPACE)
