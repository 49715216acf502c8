"""An API client that notices when the API server stops answering, so tests fail fast and say so.

Without it a request to a stopped or wedged API server waits forever (the kubernetes client sets no timeout), and
one that is refused surfaces as a urllib3 traceback after tenacity's retries. Here every request has a timeout,
a restart of a few seconds is retried as before (the errors stay transient), and once the server has not
answered for LOST_AFTER seconds each request gets one short try and then ApiServerLost: one line naming the
server and the error, which is not retried. The first answer closes the breaker again.

An answer that is not a success is raised as the client raises it, but without the answer's HTTP headers: the text of
the client's ApiException, which a failed test and a traceback show, would otherwise dump them
(`HTTPHeaderDict({'Audit-Id': …})`), and nothing in them helps whoever reads the error."""

from __future__ import annotations

import threading
import time
from typing import Any

from kubernetes import client
from kubernetes.client import rest
from kubernetes.client.exceptions import ApiException

from winsuite.k8s.retry import TRANSPORT_ERRORS
from winsuite.k8s.retry import describe

REQUEST_TIMEOUT = (10.0, 30.0)  # (connect, read) seconds for a request that does not set its own
STREAM_TIMEOUT = (10.0, None)  # a stream (log follow, a watch without its own timeout) may be idle for long
LOST_AFTER = 20.0  # seconds without an answer before the server counts as lost (a restart takes a few)
PROBE_TIMEOUT = (3.0, 5.0)  # one try per request while lost


class ApiServerLost(Exception):
    """The API server has not answered for a while: the test fails with this line, without more retries."""


class _Breaker:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.failing_since: float | None = None

    def answered(self) -> None:
        with self._lock:
            self.failing_since = None

    def failed(self, asked_at: float) -> float:
        """Seconds the server has not answered: since the failed request was sent (a timeout took that long),
        or since an earlier failure."""
        with self._lock:
            if self.failing_since is None or asked_at < self.failing_since:
                self.failing_since = asked_at
            return time.monotonic() - self.failing_since

    @property
    def lost(self) -> bool:
        """The server has not answered for LOST_AFTER seconds."""
        since = self.failing_since
        return since is not None and time.monotonic() - since >= LOST_AFTER


class _GuardedRest(rest.RESTClientObject):  # type: ignore[misc]
    def __init__(self, configuration: client.Configuration) -> None:
        super().__init__(configuration)
        self.server = configuration.host
        self.breaker = _Breaker()

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        lost = self.breaker.lost
        if lost:
            kwargs["_request_timeout"] = PROBE_TIMEOUT
        elif not kwargs.get("_request_timeout"):
            streaming = kwargs.get("_preload_content") is False
            kwargs["_request_timeout"] = STREAM_TIMEOUT if streaming else REQUEST_TIMEOUT
        asked_at = time.monotonic()
        try:
            response = super().request(method, url, *args, **kwargs)
        except TRANSPORT_ERRORS as err:
            silent = self.breaker.failed(asked_at)
            if lost or silent >= LOST_AFTER:
                raise ApiServerLost(f"the Kubernetes API server at {self.server} has not answered for "
                                    f"{silent:.0f}s: {_reason(err)}") from None
            raise
        self.breaker.answered()
        return response


def _without_headers(response: rest.RESTResponse) -> ApiException:
    """The ApiException the client makes of a failed answer (its status, reason and body), without headers."""
    data = response.read()
    error = ApiException(http_resp=response, body=data.decode("utf-8", errors="replace") if data else None)
    error.headers = None
    return error


def _reason(error: BaseException) -> str:
    reason = getattr(error, "reason", None)
    return describe(reason) if isinstance(reason, BaseException) else describe(error)


class GuardedApiClient(client.ApiClient):  # type: ignore[misc]
    """kubernetes.client.ApiClient with request timeouts and the lost-server breaker (see the module)."""

    def __init__(self, configuration: client.Configuration) -> None:
        super().__init__(configuration)
        self.rest_client = _GuardedRest(configuration)

    def call_api(self, *args: Any, **kwargs: Any) -> rest.RESTResponse:
        """Every API call's answer; one that is not a success raised here, without its headers (see the module)."""
        response = super().call_api(*args, **kwargs)
        if not 200 <= response.status <= 299:
            raise _without_headers(response)
        return response

    def serving_problem(self, timeout: float = 5.0) -> str | None:
        """None when GET /readyz answers ok within `timeout`; else one line saying what happened instead."""
        try:
            response = self.rest_client.request("GET", f"{self.configuration.host}/readyz",
                                                _request_timeout=timeout)
        except ApiServerLost as err:
            return str(err)
        except (*TRANSPORT_ERRORS, ApiException) as err:
            return f"the Kubernetes API server at {self.configuration.host} does not answer: {_reason(err)}"
        data = response.read()
        body = data.decode(errors="replace").strip() if isinstance(data, bytes) else ""
        return None if body == "ok" else f"the Kubernetes API server at {self.configuration.host} says {body[:80]!r}"
