"""A real GCS-protocol server on loopback (fsouza/fake-gcs-server, built into the cache), and its JSON API.

    with gcs_server.start(workdir) as server:          # builds the server on first use (minutes), then cached
        server.create_bucket("results")
        server.upload_tree("results", "logs/ci-job", Path("artifacts/ci-job"))
        subprocess.run([...], env={**os.environ, **server.client_env()})   # Go clients: STORAGE_EMULATOR_HOST
        server.download("results", "logs/ci-job/latest-build.txt")

Objects live in the server's memory: nothing is written outside `workdir` (its log), nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import ctypes
import json
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from tests.tools.go_programs import GoPrograms
from tests.tools.go_programs import ensure_built
from winsuite.components.logs import tail
from winsuite.components.progress import Reporter
from winsuite.components.progress import stderr_reporter

FAKE_GCS_SERVER = GoPrograms(
    key="fake-gcs-server",
    module="github.com/fsouza/fake-gcs-server",
    version="v1.56.1",
    minimum_go="1.26",
    programs={"fake-gcs-server": "github.com/fsouza/fake-gcs-server"},
)
HOST = "127.0.0.1"
READY_SECONDS = 30.0
STOP_SECONDS = 10.0
_PORT_TRIES = 3
_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded here: the child after fork only calls it
# Loopback only: a proxy from the environment must never see these requests.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class GcsError(RuntimeError):
    """The server did not start, or answered a request with an error; the message says which and why."""


def build(report: Reporter = stderr_reporter) -> Path:
    """The server's binary, built into ~/.cache/winsuite/bin/fake-gcs-server-<version>/ when missing."""
    return ensure_built(FAKE_GCS_SERVER, report)["fake-gcs-server"]


@dataclass
class GcsServer:
    """A running fake-gcs-server: its address, its process, its log."""

    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def host(self) -> str:
        """host:port, what STORAGE_EMULATOR_HOST takes."""
        return f"{HOST}:{self.port}"

    def object_reads(self) -> int:
        """Objects downloaded so far, counted in the server's access log (a server started with log_requests)."""
        return self.log.read_text(errors="replace").count("alt=media")

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}"

    def client_env(self) -> dict[str, str]:
        """Environment that points Google's storage clients (Go's cloud.google.com/go/storage, Python's
        google-cloud-storage) at this server, without credentials."""
        return {"STORAGE_EMULATOR_HOST": self.host}

    def create_bucket(self, bucket: str) -> None:
        self._request("POST", "/storage/v1/b?project=winsuite", json.dumps({"name": bucket}).encode(),
                      "application/json")

    def upload(self, bucket: str, name: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        query = urllib.parse.urlencode({"uploadType": "media", "name": name})
        self._request("POST", f"/upload/storage/v1/b/{_segment(bucket)}/o?{query}", data, content_type)

    def upload_tree(self, bucket: str, prefix: str, directory: Path) -> int:
        """Every file under `directory` as `<prefix>/<relative path>`; returns how many."""
        files = sorted(path for path in directory.rglob("*") if path.is_file())
        for path in files:
            name = "/".join(part for part in (prefix.strip("/"), path.relative_to(directory).as_posix()) if part)
            self.upload(bucket, name, path.read_bytes(), _content_type(path))
        return len(files)

    def download(self, bucket: str, name: str) -> bytes:
        return self._request("GET", f"/storage/v1/b/{_segment(bucket)}/o/{_segment(name)}?alt=media")

    def list(self, bucket: str, prefix: str = "") -> list[str]:
        """Names of the bucket's objects under `prefix`, every page of the listing."""
        names: list[str] = []
        token = ""
        while True:
            query = {"prefix": prefix, **({"pageToken": token} if token else {})}
            listing = f"/storage/v1/b/{_segment(bucket)}/o?{urllib.parse.urlencode(query)}"
            page = json.loads(self._request("GET", listing))
            names += [item["name"] for item in page.get("items", [])]
            token = page.get("nextPageToken", "")
            if not token:
                return names

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after STOP_SECONDS; only this server's own process."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> GcsServer:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def _request(self, method: str, path: str, data: bytes | None = None, content_type: str = "") -> bytes:
        request = urllib.request.Request(self.endpoint + path, data=data, method=method)
        if content_type:
            request.add_header("Content-Type", content_type)
        try:
            with _OPENER.open(request, timeout=60) as response:
                body: bytes = response.read()
                return body
        except urllib.error.HTTPError as err:
            detail = err.read().decode(errors="replace").strip()[:300]
            raise GcsError(f"{method} {path}: HTTP {err.code}: {detail}") from None
        except OSError as err:
            raise GcsError(f"{method} {path}: {err}; server log {self.log}:\n{tail(self.log)}") from err


def start(workdir: Path, binary: Path | None = None, report: Reporter = stderr_reporter, *,
          log_requests: bool = False) -> GcsServer:
    """Start a server on a free loopback port (building it first if needed); ready when this returns. With
    `log_requests` its log is an access log (each request a line)."""
    executable = binary or build(report)
    workdir.mkdir(parents=True, exist_ok=True)
    last = ""
    for attempt in range(_PORT_TRIES):  # another process may take the free port before the server binds it
        port = _free_port()
        log = workdir / f"fake-gcs-server-{port}.log"
        argv = [str(executable), "-scheme", "http", "-host", HOST, "-port", str(port), "-backend", "memory",
                "-public-host", f"{HOST}:{port}", "-external-url", f"http://{HOST}:{port}",
                "-log-level", "info" if log_requests else "warn"]
        with log.open("wb") as out:
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       preexec_fn=_die_with_parent)  # noqa: PLW1509  one C call, no lock taken
        server = GcsServer(port, process, log)
        try:
            _wait_ready(server)
            return server
        except GcsError as err:
            server.stop()
            last = str(err)
            if attempt + 1 < _PORT_TRIES and "address already in use" in log.read_text(errors="replace"):
                continue
            raise
    raise GcsError(last)


def _wait_ready(server: GcsServer) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while True:
        if server.process.poll() is not None:
            raise GcsError(
                f"fake-gcs-server exited ({server.process.returncode}); log {server.log}:\n{tail(server.log)}")
        try:
            server._request("GET", "/storage/v1/b")
            return
        except GcsError:
            if time.monotonic() > deadline:
                raise GcsError(f"fake-gcs-server on {server.host} did not answer within {READY_SECONDS:.0f}s; "
                               f"log {server.log}:\n{tail(server.log)}") from None
            time.sleep(0.1)


def _die_with_parent() -> None:
    """In the server's process: SIGTERM when the process that started it dies, so that a test session killed
    before its clean-up leaves no server behind (Linux's PR_SET_PDEATHSIG)."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _segment(value: str) -> str:
    """One path segment of the JSON API: object names keep their slashes inside it, encoded."""
    return urllib.parse.quote(value, safe="")


def _content_type(path: Path) -> str:
    return {".json": "application/json", ".xml": "application/xml", ".txt": "text/plain"}.get(
        path.suffix, "application/octet-stream")

