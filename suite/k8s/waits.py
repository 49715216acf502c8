"""Waiting for an object to reach a condition by watching it, with a deadline and the last state on timeout."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from kubernetes import watch
from kubernetes.client.exceptions import ApiException

from winsuite.k8s import retry

log = logging.getLogger("winsuite.k8s")

# A predicate returns True when done, False to keep waiting, or raises PermanentFailure to stop early.
Predicate = Callable[[Any], bool]


class WaitTimeout(AssertionError):
    """The condition did not hold before the deadline; carries the last state seen."""

    def __init__(self, what: str, timeout: float, last: str) -> None:
        super().__init__(f"timed out after {timeout:.0f}s waiting for {what}; last state seen: {last}")
        self.last = last


class PermanentFailure(AssertionError):
    """The object reached a state from which the condition can no longer hold (e.g. pod Failed)."""


def wait_for(
    list_fn: Callable[..., Any],
    *,
    name: str,
    namespace: str | None,
    what: str,
    condition: Predicate,
    timeout: float,
    describe: Callable[[Any], str] = repr,
) -> Any:
    """Watch one object (by field selector) until `condition(obj)` holds; return the object."""
    seen: list[Any] = []

    def holds(objects: list[Any]) -> bool:
        seen[:] = objects or seen  # keep the last state even if the object goes away
        return bool(objects) and condition(objects[0])

    found = _watch_until(list_fn, {"field_selector": f"metadata.name={name}"}, namespace, what, holds, timeout,
                         lambda _: "object not found" if not seen else describe(seen[0]))
    return found[0]


def wait_for_set(
    list_fn: Callable[..., Any],
    *,
    namespace: str | None,
    label_selector: str,
    what: str,
    condition: Callable[[list[Any]], bool],
    timeout: float,
    describe: Callable[[list[Any]], str] = repr,
) -> list[Any]:
    """Watch every object matching a label selector until `condition(objects)` holds; return them."""
    return _watch_until(list_fn, {"label_selector": label_selector}, namespace, what, condition, timeout, describe)


def _watch_until(
    list_fn: Callable[..., Any],
    selector: dict[str, str],
    namespace: str | None,
    what: str,
    condition: Callable[[list[Any]], bool],
    timeout: float,
    describe: Callable[[list[Any]], str],
) -> list[Any]:
    """LIST, then WATCH from that resourceVersion, re-evaluating on every change; re-LIST when the API server
    expires (410 Gone) or closes the watch; give up at the deadline with the last state seen."""
    log.info("waiting up to %.0fs for %s", timeout, what)
    deadline = time.monotonic() + timeout
    kwargs: dict[str, Any] = dict(selector)
    if namespace is not None:
        kwargs["namespace"] = namespace
    current: dict[str, Any] = {}
    while (remaining := deadline - time.monotonic()) > 0:
        listing = retry.call(list_fn, **kwargs)
        current = {o.metadata.name: o for o in listing.items}
        if condition(list(current.values())):
            return list(current.values())
        stream = watch.Watch()
        try:
            for event in stream.stream(
                list_fn, resource_version=listing.metadata.resource_version,
                timeout_seconds=max(1, int(remaining)), _request_timeout=remaining + 5, **kwargs,
            ):
                if event["type"] == "ERROR":
                    break
                obj = event["object"]
                if event["type"] == "DELETED":
                    current.pop(obj.metadata.name, None)
                else:
                    current[obj.metadata.name] = obj
                if condition(list(current.values())):
                    return list(current.values())
                if time.monotonic() >= deadline:
                    break
        except ApiException as err:
            if err.status != 410 and not retry.is_transient(err):
                raise
        finally:
            stream.stop()
    raise WaitTimeout(what, timeout, describe(list(current.values())))
