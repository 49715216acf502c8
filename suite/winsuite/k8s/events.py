"""Events: list a namespace's events and wait for one with a given reason."""

from __future__ import annotations

import time
from collections.abc import Callable

from kubernetes import client
from kubernetes import watch

from winsuite.k8s import retry
from winsuite.k8s.waits import WaitTimeout

# The watch's own bound past its server-side timeout (timeout_seconds): a connection that went silent ends then.
WATCH_MARGIN = 10


def list_events(api: client.ApiClient, namespace: str) -> list[client.CoreV1Event]:
    items = retry.call(client.CoreV1Api(api).list_namespaced_event, namespace).items
    return sorted(items, key=lambda e: e.last_timestamp or e.event_time or e.metadata.creation_timestamp)


def describe(event: client.CoreV1Event) -> str:
    obj = event.involved_object
    return f"{event.type} {event.reason} {obj.kind}/{obj.name}: {event.message}"


def wait_for_event(api: client.ApiClient, namespace: str, *, involved: str, reason: str,
                   timeout: float = 120.0, matching: Callable[[str], bool] = lambda _: True) -> client.CoreV1Event:
    """Watch the namespace's events until one about `involved` has `reason` (and a matching message)."""
    core = client.CoreV1Api(api)
    selector = f"involvedObject.name={involved},reason={reason}"
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while (remaining := deadline - time.monotonic()) > 0:
        listing = retry.call(core.list_namespaced_event, namespace, field_selector=selector)
        for event in listing.items:
            seen.append(describe(event))
            if matching(event.message or ""):
                return event
        stream = watch.Watch()
        try:
            for change in stream.stream(core.list_namespaced_event, namespace, field_selector=selector,
                                        resource_version=listing.metadata.resource_version,
                                        timeout_seconds=max(1, int(remaining)),
                                        _request_timeout=max(1, int(remaining)) + WATCH_MARGIN):
                event = change["object"]
                if change["type"] in ("ADDED", "MODIFIED"):
                    seen.append(describe(event))
                    if matching(event.message or ""):
                        return event
        finally:
            stream.stop()
    others = "; ".join(describe(e) for e in list_events(api, namespace)[-5:])
    raise WaitTimeout(f"event {reason} for {involved} in {namespace}", timeout,
                      "; ".join(seen[-3:]) or f"no such event; latest events: {others or 'none'}")
