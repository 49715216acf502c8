"""Waiting for an object to reach a condition by watching it, with a deadline and the last state on timeout."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from kubernetes import watch
from kubernetes.client.exceptions import ApiException

from suite.k8s import retry

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
    """Watch one object (by field selector) until `condition(obj)` holds; return the object.

    The watch restarts from a fresh LIST when the API server expires it (410 Gone) or closes it.
    """
    log.info("waiting up to %.0fs for %s", timeout, what)
    deadline = time.monotonic() + timeout
    kwargs: dict[str, Any] = {"field_selector": f"metadata.name={name}"}
    if namespace is not None:
        kwargs["namespace"] = namespace
    last: Any = None
    while (remaining := deadline - time.monotonic()) > 0:
        listing = retry.call(list_fn, **kwargs)
        for obj in listing.items:
            last = obj
            if condition(obj):
                return obj
        stream = watch.Watch()
        try:
            for event in stream.stream(
                list_fn, resource_version=listing.metadata.resource_version,
                timeout_seconds=max(1, int(remaining)), _request_timeout=remaining + 5, **kwargs,
            ):
                if event["type"] == "ERROR":
                    break
                last = event["object"]
                if event["type"] != "DELETED" and condition(last):
                    return last
                if time.monotonic() >= deadline:
                    break
        except ApiException as err:
            if err.status != 410 and not retry.is_transient(err):
                raise
        finally:
            stream.stop()
    raise WaitTimeout(what, timeout, "object not found" if last is None else describe(last))


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
    log.info("waiting up to %.0fs for %s", timeout, what)
    deadline = time.monotonic() + timeout
    kwargs: dict[str, Any] = {"label_selector": label_selector}
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
