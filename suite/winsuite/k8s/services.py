"""Services and EndpointSlices: create, wait for ready endpoints."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from winsuite.k8s import retry
from winsuite.k8s.waits import wait_for_set

SERVICE_NAME_LABEL = "kubernetes.io/service-name"


def create(api: client.ApiClient, namespace: str, manifest: dict[str, Any]) -> client.V1Service:
    return retry.call(client.CoreV1Api(api).create_namespaced_service, namespace, manifest)


def ready_endpoints(slices: list[client.V1EndpointSlice]) -> list[str]:
    return [addr for s in slices for ep in s.endpoints or []
            if ep.conditions is None or ep.conditions.ready is not False for addr in ep.addresses]


def wait_for_endpoints(api: client.ApiClient, namespace: str, service: str, *, count: int = 1,
                       timeout: float = 120.0) -> list[str]:
    """Wait until the Service's EndpointSlices hold `count` ready addresses; return them."""
    slices = wait_for_set(
        client.DiscoveryV1Api(api).list_namespaced_endpoint_slice, namespace=namespace,
        label_selector=f"{SERVICE_NAME_LABEL}={service}",
        what=f"{count} ready endpoint(s) of service {namespace}/{service}",
        condition=lambda items: len(ready_endpoints(items)) >= count, timeout=timeout,
        describe=lambda items: f"ready endpoints: {ready_endpoints(items) or 'none'}",
    )
    return ready_endpoints(slices)
