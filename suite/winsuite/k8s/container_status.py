"""A container's status in its pod, read as upstream reads it: started, restarted, terminated."""

from __future__ import annotations

import datetime

from kubernetes import client

from winsuite.k8s import pods


def status_of(pod_: client.V1Pod, name: str) -> client.V1ContainerStatus | None:
    status = pod_.status or client.V1PodStatus()
    statuses = (status.init_container_statuses or []) + (status.container_statuses or [])
    return next((s for s in statuses if s.name == name), None)


def started_at(pod_: client.V1Pod, name: str) -> datetime.datetime:
    """GetContainerStartedTime: when the running container started."""
    running = getattr(getattr(status_of(pod_, name), "state", None), "running", None)
    assert running is not None, f"container {name} is not running: {pods.describe(pod_)}"
    started: datetime.datetime = running.started_at
    return started


def restart_count(pod_: client.V1Pod, name: str) -> int:
    status = status_of(pod_, name)
    return int(status.restart_count) if status else 0


def has_started(pod_: client.V1Pod, name: str) -> bool:
    """The container is no longer waiting: it runs or has terminated at least once."""
    state = getattr(status_of(pod_, name), "state", None)
    return state is not None and (state.running is not None or state.terminated is not None)


def has_terminated(pod_: client.V1Pod, name: str) -> bool:
    return getattr(getattr(status_of(pod_, name), "state", None), "terminated", None) is not None

