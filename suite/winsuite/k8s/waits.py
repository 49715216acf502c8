"""Waiting in tests: watch what can be watched (objects), poll what cannot (exec output, logs, stats).

Every wait has a deadline and fails with the last state it saw. The watch resumes from the last resourceVersion
it saw when the API server closes it, as client-go's RetryWatcher does, so no change goes unseen; an expired
resourceVersion (410 Gone) is relisted, and any other watch error is raised, never swallowed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any
from typing import TypeVar

from kubernetes import watch
from kubernetes.client.exceptions import ApiException

from winsuite import timeline
from winsuite.k8s import retry
from winsuite.k8s.api_answer import error_text

log = logging.getLogger("winsuite.k8s")
T = TypeVar("T")

POLL_INTERVAL = 1.0  # upstream's framework.Poll loops try about once a second
CALL_TIMEOUT = 30.0  # the longest one call to the cluster (a log read, a proxied GET) takes unless told otherwise
MIN_CALL_TIMEOUT = 1.0  # what a call still gets at the end of a poll's budget
WATCH_WINDOW = 60.0  # the longest one watch request stays open before it is resumed
GONE = 410

# A predicate returns True when done, False to keep waiting, or raises PermanentFailure to stop early.
Predicate = Callable[[Any], bool]


_polls = threading.local()  # the deadlines of the polls under way in this thread


def call_timeout(limit: float = CALL_TIMEOUT) -> float:
    """How long one call to the cluster (an exec, a log read, a proxied GET) may take: `limit`, and no longer than
    the polls it is made in have left, so that a poll's budget holds (as a Go call does with its poll's context)."""
    deadlines: list[float] = getattr(_polls, "deadlines", [])
    if deadlines:
        limit = min(limit, min(deadlines) - time.monotonic())
    return max(MIN_CALL_TIMEOUT, limit)


class WaitTimeout(AssertionError):
    """The condition did not hold before the deadline; carries the last state seen."""

    def __init__(self, what: str, timeout: float, last: str) -> None:
        super().__init__(f"timed out after {timeout:.0f}s waiting for {what}; last state seen: {last}")
        self.last = last


class PermanentFailure(AssertionError):
    """The object reached a state from which the condition can no longer hold (e.g. pod Failed)."""


class WatchExpired(Exception):
    """The resourceVersion the watch resumes from is too old (410 Gone): only a new LIST can go on."""


class WatchFailed(AssertionError):
    """The watch ended with an error that is not a resumable one (watchtools.Until's error)."""


@dataclasses.dataclass
class ResumePoint:
    """Where a watch goes on from: the resourceVersion of the last event seen (objects and bookmarks)."""

    resource_version: str

    def advance(self, event: dict[str, Any]) -> bool:
        """Record the event's resourceVersion; True when it is a change to hand on (not a bookmark)."""
        raw = event.get("raw_object")
        version = ((raw or {}).get("metadata") or {}).get("resourceVersion") if isinstance(raw, dict) else None
        if version:
            self.resource_version = str(version)
        return event.get("type") in ("ADDED", "MODIFIED", "DELETED")

    @staticmethod
    def classify(error: BaseException) -> str:
        """What a failed watch request means: 'relist' (410), 'resume' (transient), or 'fail'."""
        if isinstance(error, ApiException) and error.status == GONE:
            return "relist"
        return "resume" if retry.is_transient(error) else "fail"


def watch_from(list_fn: Callable[..., Any], resource_version: str, *, deadline: float,
               stop: threading.Event | None = None, window: float = WATCH_WINDOW,
               **selector: Any) -> Iterator[dict[str, Any]]:
    """Every change after `resource_version` until the deadline (or `stop`, noticed within `window` seconds):
    each watch request lasts at most `window` seconds and the next resumes from the last resourceVersion seen,
    as after the server closing it or a transient error. Raises WatchExpired on 410 Gone and WatchFailed on
    any other error."""
    point = ResumePoint(resource_version)
    while (remaining := deadline - time.monotonic()) > 0 and not (stop and stop.is_set()):
        span = min(remaining, window)
        stream = watch.Watch()
        try:
            for event in stream.stream(list_fn, resource_version=point.resource_version,
                                       allow_watch_bookmarks=True, timeout_seconds=max(1, int(span)),
                                       _request_timeout=span + 10, **selector):
                if point.advance(event):
                    yield event
                if time.monotonic() >= deadline or (stop and stop.is_set()):
                    return
        except (ApiException, OSError, *retry.TRANSPORT_ERRORS) as err:
            action = ResumePoint.classify(err)
            if action == "relist":
                raise WatchExpired(error_text(err)) from err
            if action == "fail":
                raise WatchFailed(f"watch failed: {retry.describe(err)}") from err
            log.info("watch interrupted (%s); resuming from resourceVersion %s", retry.describe(err),
                     point.resource_version)
            time.sleep(min(POLL_INTERVAL, max(0.0, deadline - time.monotonic())))
        finally:
            stream.stop()


class BackgroundWatch:
    """Watches objects in a thread from a resourceVersion, without gaps, while a test acts (a goroutine
    running watchtools.Until): every change `violates` finds something wrong with is recorded, and a watch
    error is kept; `check()` fails on either, so a dead watch never passes for "nothing seen"."""

    def __init__(self, list_fn: Callable[..., Any], resource_version: str, *,
                 violates: Callable[[Any], str | None], stop_within: float = 5.0, **selector: Any) -> None:
        self._list_fn, self._resource_version, self._selector = list_fn, resource_version, selector
        self._violates, self._stop_within = violates, stop_within
        self.violations: list[str] = []
        self.seen = 0
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            for event in watch_from(self._list_fn, self._resource_version, deadline=float("inf"), stop=self._stop,
                                    window=self._stop_within, **self._selector):
                self.seen += 1
                if problem := self._violates(event["object"]):
                    self.violations.append(problem)
        except Exception as err:  # kept for check(): the test fails with it
            self.error = err

    def __enter__(self) -> BackgroundWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=self._stop_within + 10)

    def check(self, what: str) -> None:
        assert self.error is None, f"watch for {what} failed: {self.error}"
        assert not self.violations, f"detected {what}: {self.violations}"


def _watch_until(list_fn: Callable[..., Any], selector: dict[str, str], namespace: str | None, what: str,
                 condition: Callable[[list[Any]], bool], timeout: float,
                 describe: Callable[[list[Any]], str]) -> list[Any]:
    """LIST, then watch from that resourceVersion, re-evaluating on every change; LIST again only when the
    resourceVersion expired; give up at the deadline with the last state seen."""
    with timeline.span("test: wait (watch)", what=what):
        return _watch(list_fn, selector, namespace, what, condition, timeout, describe)


def _watch(list_fn: Callable[..., Any], selector: dict[str, str], namespace: str | None, what: str,
           condition: Callable[[list[Any]], bool], timeout: float, describe: Callable[[list[Any]], str]) -> list[Any]:
    log.info("waiting up to %.0fs for %s", timeout, what)
    deadline = time.monotonic() + timeout
    kwargs: dict[str, Any] = dict(selector)
    if namespace is not None:
        kwargs["namespace"] = namespace
    current: dict[str, Any] = {}
    while deadline - time.monotonic() > 0:
        listing = retry.call(list_fn, **kwargs)
        current = {o.metadata.name: o for o in listing.items}
        if condition(list(current.values())):
            return list(current.values())
        try:
            for event in watch_from(list_fn, listing.metadata.resource_version, deadline=deadline, **kwargs):
                obj = event["object"]
                if event["type"] == "DELETED":
                    current.pop(obj.metadata.name, None)
                else:
                    current[obj.metadata.name] = obj
                if condition(list(current.values())):
                    return list(current.values())
        except WatchExpired:
            log.info("watch of %s expired; listing again", what)
    raise WaitTimeout(what, timeout, describe(list(current.values())))


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


def hold(list_fn: Callable[..., Any], *, namespace: str | None, what: str, duration: float,
         check: Callable[[list[Any]], None], name: str | None = None, label_selector: str | None = None,
         describe: Callable[[list[Any]], str] = repr) -> list[Any]:
    """gomega's Consistently, by watching: `check` (raising AssertionError on a violation) passes on every state
    of the object `name` (or of the set `label_selector`) for `duration` seconds; returns the last state.
    Fails at once when the object does not exist."""
    selector = {"field_selector": f"metadata.name={name}"} if name else {"label_selector": label_selector or ""}
    seen: list[list[Any]] = []

    def never_done(objects: list[Any]) -> bool:
        if name and not objects:
            raise PermanentFailure(f"{what}: {name} does not exist")
        check(objects)
        seen[:] = [objects]
        return False

    # Reaching the deadline without a violation is the success of a hold.
    with contextlib.suppress(WaitTimeout):
        _watch_until(list_fn, selector, namespace, f"{what} for {duration:.0f}s", never_done, duration, describe)
    return seen[-1] if seen else []


def poll(what: str, check: Callable[[], T], *, timeout: float, interval: float = POLL_INTERVAL,
         consistently: bool = False) -> T:
    """For what cannot be watched (exec output, logs, stats): call `check` every `interval` seconds.

    Eventually (default): until it returns without raising AssertionError, an API error (a container still
    starting answers 400) or a network error; at the deadline, fail naming the last error. Consistently: it
    must pass on every call for `timeout` seconds; the first failure fails. Returns `check`'s last value.
    """
    with timeline.span("test: wait (poll)", what=what):
        return _poll(what, check, timeout, interval, consistently)


def _poll(what: str, check: Callable[[], T], timeout: float, interval: float, consistently: bool) -> T:
    log.info("polling %.0fs for %s%s", timeout, what, " to hold" if consistently else "")
    deadline = time.monotonic() + timeout
    if not hasattr(_polls, "deadlines"):
        _polls.deadlines = []
    _polls.deadlines.append(deadline)
    try:
        return _poll_until(what, check, timeout, interval, consistently, deadline)
    finally:
        _polls.deadlines.pop()


def _poll_until(what: str, check: Callable[[], T], timeout: float, interval: float, consistently: bool,
                deadline: float) -> T:
    while True:
        try:
            value = check()
            if not consistently or time.monotonic() + interval > deadline:
                return value
        except (AssertionError, ApiException, OSError, *retry.TRANSPORT_ERRORS) as err:
            if consistently:
                raise AssertionError(f"{what} did not hold for {timeout:.0f}s: {error_text(err)}") from err
            if time.monotonic() + interval > deadline:
                raise WaitTimeout(what, timeout, error_text(err)) from err
        time.sleep(interval)

