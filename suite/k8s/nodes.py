"""Nodes: what a node is (OS, Windows build, simulated or real), and which are usable for a target OS."""

from __future__ import annotations

from kubernetes import client

from winsuite.authoring.targeting import OS_LABEL
from winsuite.authoring.targeting import SIMULATED_NODE_ANNOTATION
from winsuite.authoring.targeting import WINDOWS_BUILD_LABEL
from winsuite.k8s import retry


def list_nodes(api: client.ApiClient) -> list[client.V1Node]:
    return list(retry.call(client.CoreV1Api(api).list_node).items)


def os_of(node: client.V1Node) -> str:
    labels = node.metadata.labels or {}
    return str(labels.get(OS_LABEL) or node.status.node_info.operating_system or "")


def windows_build(node: client.V1Node) -> str | None:
    return (node.metadata.labels or {}).get(WINDOWS_BUILD_LABEL)


def is_simulated(node: client.V1Node) -> bool:
    """kwok nodes report pods Running without running anything."""
    return SIMULATED_NODE_ANNOTATION in (node.metadata.annotations or {})


def is_ready(node: client.V1Node) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])


def internal_ip(node: client.V1Node) -> str | None:
    return next((a.address for a in node.status.addresses or [] if a.type == "InternalIP"), None)
