"""The kubelet's own endpoints through the API server's node proxy: /stats/summary, /configz and /metrics."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any
from typing import cast

import pytest
from kubernetes import client
from kubernetes.utils import parse_quantity

from winsuite.k8s import retry
from winsuite.k8s.waits import call_timeout

to_decimal = cast(Callable[[str], Decimal], parse_quantity)  # "100Mi" -> Decimal(104857600)
# One sample line of the Prometheus text format: name{labels} value [timestamp].
_SAMPLE = re.compile(r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>[^}]*)\})?\s+(?P<value>\S+)")
_LABEL = re.compile(r'(?P<key>[A-Za-z_][A-Za-z0-9_]*)="(?P<value>(?:[^"\\]|\\.)*)"')


def proxy_get(api: client.ApiClient, node: str, path: str, *, timeout: float = 60.0) -> bytes:
    """GET /api/v1/nodes/<node>/proxy/<path>: the raw body the kubelet answered."""
    # Unparsed (_preload_content=False): the client would otherwise turn a JSON body into a Python repr.
    bound = call_timeout(timeout)  # no longer than the poll it is made in has left
    response: Any = retry.call(client.CoreV1Api(api).connect_get_node_proxy_with_path, node, path,
                               _preload_content=False, deadline=bound, _request_timeout=bound)
    return bytes(response.data)


def stats_summary(api: client.ApiClient, node: str) -> dict[str, Any]:
    """e2ekubelet.GetStatsSummary: the node's /stats/summary document."""
    summary: dict[str, Any] = json.loads(proxy_get(api, node, "stats/summary"))
    return summary


def timed_stats_summary(api: client.ApiClient, node: str) -> tuple[dict[str, Any], float]:
    """The summary and how long the request took, in seconds."""
    start = time.monotonic()
    summary = stats_summary(api, node)
    return summary, time.monotonic() - start


def pod_stats(summary: dict[str, Any], namespace: str) -> list[dict[str, Any]]:
    """The summary's entries for the pods of one namespace."""
    return [p for p in summary.get("pods") or [] if p["podRef"]["namespace"] == namespace]


def configz(api: client.ApiClient, node: str) -> dict[str, Any]:
    """The kubelet's running configuration (the `kubeletconfig` object of /configz)."""
    config: dict[str, Any] = json.loads(proxy_get(api, node, "configz"))["kubeletconfig"]
    return config


def duration_seconds(text: str | None) -> float:
    """A Go duration as /configz prints it ("1m30s", "20s", "0s"), in seconds; 0 when unset."""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    return sum(float(n) * units[u] for n, u in re.findall(r"([\d.]+)(ms|h|m|s)", text or ""))


def memory_setting(values: dict[str, str] | None, key: str) -> Decimal:
    """A memory quantity of a configz map (systemReserved, evictionHard, …) in bytes; 0 when unset or not a
    quantity (e.g. a percentage), as memory_limits.go's getNodeMemory treats it."""
    raw = (values or {}).get(key)
    if raw is None:
        return Decimal(0)
    try:
        return to_decimal(raw)
    except ValueError:
        return Decimal(0)


def metrics(api: client.ApiClient, node: str) -> str:
    """The kubelet's /metrics in the Prometheus text format."""
    return proxy_get(api, node, "metrics").decode()


def samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    """Every sample of one metric: (labels, value)."""
    found = []
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if match and match["name"] == name:
            labels = {m["key"]: m["value"] for m in _LABEL.finditer(match["labels"] or "")}
            found.append((labels, float(match["value"])))
    return found


def skip_unless_graceful_node_shutdown(api: client.ApiClient, node: str) -> None:
    """The kubelet of the node must shut pods down gracefully (shutdownGracePeriod > 0 in its /configz)."""
    configured = configz(api, node).get("shutdownGracePeriod")
    if not duration_seconds(configured):
        pytest.skip(f"requires graceful node shutdown (kubelet shutdownGracePeriod) on {node} "
                    f"(found: {configured or 'unset'})")
