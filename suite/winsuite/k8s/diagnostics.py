"""Diagnostics of a failed test's namespace: events, pod descriptions and container logs, secrets redacted."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from winsuite.k8s import events
from winsuite.k8s import pods
from winsuite.k8s import retry

REDACTED = "<redacted>"
# JWTs (service-account tokens), bearer headers and `token: …`/`password=…` pairs.
_SECRET_PATTERNS = (
    re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"(?i)((?:token|password|secret)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{4,}"),
)


def redact(text: str) -> str:
    """Mask anything that looks like a credential; diagnostics are published with the results."""
    text = _SECRET_PATTERNS[0].sub(REDACTED, text)
    for pattern in _SECRET_PATTERNS[1:]:
        text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
    return text


def _pod_yaml(api: client.ApiClient, pod: client.V1Pod) -> dict[str, Any]:
    data: dict[str, Any] = api.sanitize_for_serialization(pod)
    data.get("metadata", {}).pop("managedFields", None)
    return data


def collect(api: client.ApiClient, namespace: str, dest: Path, max_log_bytes: int = 1_000_000) -> list[Path]:
    """Write events.yaml, pods.yaml and logs/<pod>/<container>[.previous].log; never Secret objects."""
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    event_list = [api.sanitize_for_serialization(e) for e in events.list_events(api, namespace)]
    written.append(_write(dest / "events.yaml", yaml.safe_dump(event_list, sort_keys=False)))
    pod_list = retry.call(client.CoreV1Api(api).list_namespaced_pod, namespace).items
    written.append(_write(dest / "pods.yaml", yaml.safe_dump([_pod_yaml(api, p) for p in pod_list], sort_keys=False)))
    summary = "\n".join(pods.describe(p) for p in pod_list)
    written.append(_write(dest / "pods.txt", summary + "\n"))
    for pod in pod_list:
        statuses = (pod.status.init_container_statuses or []) + (pod.status.container_statuses or [])
        for status in statuses:
            for previous in (False, True):
                if previous and not status.restart_count:
                    continue
                try:
                    text = pods.logs(api, namespace, pod.metadata.name, status.name, previous=previous)
                except ApiException as err:  # e.g. a simulated node has no logs to give
                    text = f"<logs unavailable: {err.status} {err.reason}>"
                suffix = ".previous.log" if previous else ".log"
                path = dest / "logs" / pod.metadata.name / f"{status.name}{suffix}"
                written.append(_write(path, text[-max_log_bytes:]))
    return written


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(redact(text))
    return path
