"""The few API calls the launcher makes: create objects, and wait for nodes and pods by watching."""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kubernetes import client
from kubernetes import config as kube_config
from kubernetes import watch

from winsuite.components.errors import ComponentFailed
from winsuite.k8s.not_found import ignore_not_found

# These two modules of the client have no type hints; calls go through Any rather than per-line ignores.
_watch: Any = watch
_config: Any = kube_config


REQUEST_TIMEOUT = 10  # seconds: the local API server answers in milliseconds, or is not serving


def api(kubeconfig_path: Path) -> client.CoreV1Api:
    return client.CoreV1Api(_config.new_client_from_config(config_file=str(kubeconfig_path)))


def _stream(list_call: Any, version: str, timeout: float, **selectors: str) -> Iterator[dict[str, Any]]:
    """Watch events after `version`, ending at the server-side timeout."""
    # The client-side timeout ends a watch on a server that stopped answering (stopped, or wedged).
    events: Iterator[dict[str, Any]] = _watch.Watch().stream(
        list_call, resource_version=version, timeout_seconds=max(1, int(timeout)),
        _request_timeout=max(1, int(timeout)) + REQUEST_TIMEOUT, **selectors
    )
    return events


def _watch_until(list_call: Any, timeout: float, found: Callable[[list[Any]], bool], **selectors: str) -> bool:
    """List, then watch from that list's version until `found` holds for the items or for one event's object."""
    listing: Any = list_call(**selectors)
    if found(listing.items):
        return True
    deadline = time.monotonic() + timeout
    version: str = listing.metadata.resource_version
    while time.monotonic() < deadline:
        for event in _stream(list_call, version, deadline - time.monotonic(), **selectors):
            version = event["object"].metadata.resource_version
            if event["type"] != "DELETED" and found([event["object"]]):
                return True
    return False


def _ignore_conflict(create: Any, *args: Any) -> None:
    """Create an object; one that exists already is left as it is (a reused cluster)."""
    try:
        create(*args)
    except client.ApiException as err:
        if err.status != 409:
            raise


def create_nodes(core: client.CoreV1Api, nodes: Iterable[dict[str, Any]]) -> None:
    """Create each Node; kwok keeps the status given at creation and fills in the rest."""
    for node in nodes:
        _ignore_conflict(core.create_node, node)


def create_namespaced(core: client.CoreV1Api, objects: Iterable[dict[str, Any]]) -> None:
    creators = {"Service": core.create_namespaced_service, "Endpoints": core.create_namespaced_endpoints}
    for obj in objects:
        _ignore_conflict(creators[obj["kind"]], obj["metadata"]["namespace"], obj)


def create_api_service(api_client: client.ApiClient, obj: dict[str, Any]) -> None:
    _ignore_conflict(client.ApiregistrationV1Api(api_client).create_api_service, obj)


def wait_api_service_available(api_client: client.ApiClient, name: str, timeout: float) -> None:
    """Watch the APIService until its Available condition is True (the aggregator reached its backend)."""
    registration = client.ApiregistrationV1Api(api_client)

    def available(items: list[Any]) -> bool:
        return any(c.type == "Available" and c.status == "True"
                   for item in items for c in (item.status.conditions or []) if item.metadata.name == name)

    if not _watch_until(registration.list_api_service, timeout, available, field_selector=f"metadata.name={name}"):
        conditions = registration.read_api_service(name, _request_timeout=REQUEST_TIMEOUT).status.conditions
        raise ComponentFailed(f"APIService {name} not Available after {timeout:.0f}s: "
                              + "; ".join(f"{c.type}={c.status} ({c.reason}: {c.message})" for c in conditions or []))


def _ready(node: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in (node.status.conditions or []))


def wait_nodes_ready(core: client.CoreV1Api, names: Iterable[str], timeout: float) -> float:
    """Watch nodes until every named one is Ready; on timeout say which are not and why."""
    wanted = set(names)
    started = time.monotonic()
    listing: Any = core.list_node()
    last: dict[str, Any] = {node.metadata.name: node for node in listing.items}
    version: str = listing.metadata.resource_version

    def all_ready() -> bool:
        return all(name in last and _ready(last[name]) for name in wanted)

    while not all_ready():
        remaining = timeout - (time.monotonic() - started)
        if remaining <= 0:
            raise ComponentFailed(
                f"nodes not Ready after {timeout:.0f}s: {_describe_not_ready(wanted, last)}"
            )
        for event in _stream(core.list_node, version, remaining):
            node = event["object"]
            version = node.metadata.resource_version
            last[node.metadata.name] = node
            if all_ready():
                break
    return time.monotonic() - started


def _describe_not_ready(wanted: set[str], last: dict[str, Any]) -> str:
    parts = []
    for name in sorted(wanted):
        node = last.get(name)
        if node is None:
            parts.append(f"{name} (not registered)")
        elif not _ready(node):
            ready = [c for c in (node.status.conditions or []) if c.type == "Ready"]
            parts.append(
                f"{name} ({ready[0].reason}: {ready[0].message})" if ready else f"{name} (no Ready condition)"
            )
    return "; ".join(parts)


def delete_pods_on_node(core: client.CoreV1Api, node_name: str, timeout: float) -> list[str]:
    """Delete every pod bound to the node and watch until the kubelet has finished them all.

    Returns the pods still present at the deadline (the caller then removes their containers directly).
    """
    selector = f"spec.nodeName={node_name}"
    listing: Any = core.list_pod_for_all_namespaces(field_selector=selector, _request_timeout=REQUEST_TIMEOUT)
    remaining = {(pod.metadata.namespace, pod.metadata.name) for pod in listing.items}
    for namespace, name in remaining:
        with ignore_not_found():
            core.delete_namespaced_pod(name, namespace, grace_period_seconds=1, _request_timeout=REQUEST_TIMEOUT)
    deadline = time.monotonic() + timeout
    version: str = listing.metadata.resource_version
    while remaining and time.monotonic() < deadline:
        stream = _stream(
            core.list_pod_for_all_namespaces, version, deadline - time.monotonic(), field_selector=selector
        )
        for event in stream:
            pod = event["object"]
            version = pod.metadata.resource_version
            if event["type"] == "DELETED":
                remaining.discard((pod.metadata.namespace, pod.metadata.name))
                if not remaining:
                    break
    return sorted(f"{namespace}/{name}" for namespace, name in remaining)


def wait_service_account(
    core: client.CoreV1Api, namespace: str, timeout: float, name: str = "default"
) -> None:
    """Pods cannot be created in a namespace before the controller manager has made its default account."""
    if not _watch_until(
        core.list_namespaced_service_account,
        timeout,
        bool,
        namespace=namespace,
        field_selector=f"metadata.name={name}",
    ):
        raise ComponentFailed(
            f"service account {namespace}/{name} not created after {timeout:.0f}s (controller manager?)"
        )


def wait_service_endpoints(
    api_client: client.ApiClient, namespace: str, service: str, timeout: float
) -> None:
    """Watch EndpointSlices until the Service has a ready address (for kube-dns: mirrored from Endpoints)."""
    discovery = client.DiscoveryV1Api(api_client)
    selector = f"kubernetes.io/service-name={service}"

    def ready(slices: Iterable[Any]) -> bool:
        return any(
            ep.addresses and (ep.conditions is None or ep.conditions.ready is not False)
            for s in slices
            for ep in s.endpoints or []
        )

    if not _watch_until(
        discovery.list_namespaced_endpoint_slice, timeout, ready, namespace=namespace, label_selector=selector
    ):
        raise ComponentFailed(f"service {namespace}/{service} has no ready endpoint after {timeout:.0f}s")


def node_readiness(kubeconfig: Path) -> dict[str, str]:
    """node -> Ready / NotReady, as the API server reports it ({} when it does not answer)."""

    try:
        listing: Any = api(kubeconfig).list_node(_request_timeout=5)
    except Exception:  # an API server that does not answer is reported by the component check
        return {}
    readiness = {}
    for node in listing.items:
        ready = any(c.type == "Ready" and c.status == "True" for c in (node.status.conditions or []))
        readiness[node.metadata.name] = "Ready" if ready else "NotReady"
    return readiness
