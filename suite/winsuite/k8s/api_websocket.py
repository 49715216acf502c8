"""The API server's websocket calls (`kubectl exec`, logs over a websocket), each within a deadline.

The kubernetes client's `stream()` connects without a timeout, and after `run_forever(timeout)` a read of a channel
that got nothing waits for the next frame without one: an exec whose command still runs then (a server in the pod
that does not answer, a stopped process, a kubelet that does not answer) never returns, and the test waits for its
per-test timeout. Here connecting, the handshake and every read share the call's deadline; past it the call raises
CallTimeout, an AssertionError, so the poll it is made in tries again within its own budget.
"""

from __future__ import annotations

import dataclasses
import ssl
import time
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any

import websocket
from kubernetes.client.exceptions import ApiException
from kubernetes.stream.ws_client import get_websocket_url
from kubernetes.stream.ws_client import websocket_proxycare

PROTOCOLS = "v5.channel.k8s.io,v4.channel.k8s.io"  # as the kubernetes client asks for an exec
STDOUT, STDERR, ERROR = 1, 2, 3  # the exec channels; the error channel carries the exit status
CLOSE_CHANNEL = 255  # v5: the server closed one of the channels
_TIMEOUTS = (websocket.WebSocketTimeoutException, TimeoutError)


class CallTimeout(AssertionError):
    """A websocket call did not end within its bound."""


def _ssl_options(configuration: Any, url: str) -> dict[str, Any]:
    """The TLS settings of the client's configuration, as the kubernetes client's own websockets use them."""
    options: dict[str, Any] = {"cert_reqs": ssl.CERT_NONE}
    if url.startswith("wss://") and configuration.verify_ssl:
        options = {"cert_reqs": ssl.CERT_REQUIRED}
        if configuration.ssl_ca_cert:
            options["ca_certs"] = configuration.ssl_ca_cert
        if configuration.assert_hostname is not None:
            options["check_hostname"] = configuration.assert_hostname
    for key, value in (("certfile", configuration.cert_file), ("keyfile", configuration.key_file),
                       ("server_hostname", getattr(configuration, "tls_server_name", None))):
        if value:
            options[key] = value
    return options


def connect(api: Any, path: str, query: list[tuple[str, str]] | None = None, *, protocols: str = PROTOCOLS,
            timeout: float) -> websocket.WebSocket:
    """A websocket to `path` of the API server, authenticated as the client is, connected within `timeout`
    seconds. An answer other than the upgrade raises ApiException with its status, as the client's calls do."""
    configuration = api.configuration
    headers: dict[str, str] = {}
    auth_query: list[tuple[str, str]] = []
    api.update_params_for_auth(headers, auth_query, ["BearerToken"], path, "GET", None)
    url = get_websocket_url(f"{configuration.host}{path}", [*(query or []), *auth_query])
    header = [f"sec-websocket-protocol: {protocols}"]
    if "authorization" in headers:
        header.append(f"authorization: {headers['authorization']}")
    options: dict[str, Any] = {"header": header, "timeout": timeout}
    if configuration.proxy or configuration.proxy_headers:
        options = websocket_proxycare(options, configuration, url, headers)
    socket = websocket.WebSocket(sslopt=_ssl_options(configuration, url), skip_utf8_validation=True)
    open_it: Callable[..., None] = socket.connect  # websocket-client leaves it unannotated
    try:
        open_it(url, **options)
    except _TIMEOUTS as err:
        close(socket)
        raise CallTimeout(f"GET {path}: no websocket within {timeout:.0f}s") from err
    except websocket.WebSocketException as err:
        close(socket)
        status = err.status_code if isinstance(err, websocket.WebSocketBadStatusException) else 0
        raise ApiException(status=status, reason=str(err)) from err
    return socket


def close(socket: websocket.WebSocket) -> None:
    """Close the socket at once, without the close handshake: the stream may still be running."""
    shutdown: Callable[[], None] = socket.shutdown  # websocket-client leaves it unannotated
    shutdown()


def frames(socket: websocket.WebSocket, deadline: float, what: str) -> Iterator[bytes]:
    """Every data frame until the server closes the stream; CallTimeout when it has not by `deadline`
    (time.monotonic())."""
    while True:
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise websocket.WebSocketTimeoutException("deadline reached")
            socket.settimeout(remaining)
            opcode, frame = socket.recv_data_frame(False)
        except websocket.WebSocketConnectionClosedException:
            return
        except _TIMEOUTS as err:
            raise CallTimeout(f"{what} did not end by its deadline") from err
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            return
        yield bytes(frame.data)


@dataclasses.dataclass(frozen=True)
class Channels:
    """What a channel stream (exec) sent, by channel."""

    received: dict[int, bytes]

    def text(self, channel: int) -> str:
        return self.received.get(channel, b"").decode("utf-8", "replace")


def exec_in(api: Any, namespace: str, name: str, command: list[str], *, container: str | None,
            timeout: float) -> Channels:
    """`kubectl exec` without stdin: what the command wrote to each channel, once the server closed the stream;
    CallTimeout when connecting, the command and its output took longer than `timeout` seconds."""
    deadline = time.monotonic() + timeout
    query = [("command", part) for part in command] + [("stderr", "true"), ("stdin", "false"), ("stdout", "true"),
                                                       ("tty", "false")]
    query += [("container", container)] if container else []
    what = f"exec of {command} in pod {namespace}/{name}"
    try:
        socket = connect(api, f"/api/v1/namespaces/{namespace}/pods/{name}/exec", query, timeout=timeout)
    except CallTimeout as err:
        raise CallTimeout(f"{what}: no answer within {timeout:.0f}s ({err})") from err
    received: dict[int, bytes] = {}
    try:
        for data in frames(socket, deadline, what):
            if data and data[0] != CLOSE_CHANNEL:
                received[data[0]] = received.get(data[0], b"") + data[1:]
    except CallTimeout as err:
        so_far = Channels(received)
        raise CallTimeout(f"{what} did not finish within {timeout:.0f}s (stdout so far {so_far.text(STDOUT)!r}, "
                          f"stderr {so_far.text(STDERR)!r})") from err
    finally:
        close(socket)
    return Channels(received)
