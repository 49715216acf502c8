"""Retrying transient API errors (tenacity), kept apart from test reruns."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

import tenacity
import urllib3.exceptions
from kubernetes.client.exceptions import ApiException

T = TypeVar("T")
log = logging.getLogger("winsuite.k8s")

# Overload, throttling and proxy errors pass; 4xx answers (404, 403, 409, 422) are real answers.
TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


# What a broken connection raises from urllib3 (OSError covers the socket's own errors).
TRANSPORT_ERRORS: tuple[type[Exception], ...] = (urllib3.exceptions.HTTPError,)


def is_transient(error: BaseException) -> bool:
    if isinstance(error, ApiException):
        return error.status in TRANSIENT_STATUSES
    return isinstance(error, (*TRANSPORT_ERRORS, ConnectionError))


def describe(error: BaseException) -> str:
    """An API or network error in one line: the status and reason, or the exception's own words."""
    if isinstance(error, ApiException):
        return f"{error.status} {error.reason}"
    return f"{type(error).__name__}: {error}"


def transient_retry(deadline: float = 30.0) -> tenacity.Retrying:
    return tenacity.Retrying(
        retry=tenacity.retry_if_exception(is_transient),
        stop=tenacity.stop_after_delay(deadline),
        wait=tenacity.wait_random_exponential(multiplier=0.2, max=3),
        before_sleep=tenacity.before_sleep_log(log, logging.INFO),
        reraise=True,
    )


def call(fn: Callable[..., T], *args: object, deadline: float = 30.0, **kwargs: object) -> T:
    """Call an API function, retrying transient errors for up to `deadline` seconds."""
    return transient_retry(deadline)(fn, *args, **kwargs)
