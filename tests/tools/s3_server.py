"""A real S3 server for the tests: the Versity S3 Gateway (versitygw, Apache-2.0) built from the Go module proxy
into winsuite's cache (tests/tools/go_programs.py: keyed by version, built once per machine), started on a free
loopback port over a data directory of its own, stopped at the end. It serves the S3 API from plain files (posix
backend, metadata in a sidecar directory), and its access log is where the tests count the requests a report made.

Why not MinIO: its server module is a 260-dependency build (see docs/clusters.md, "Tests against object stores").
"""

from __future__ import annotations

import collections
import contextlib
import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from minio import Minio

from tests.tools.go_programs import GoPrograms
from tests.tools.go_programs import ensure_built
from winsuite.components.progress import Reporter
from winsuite.components.progress import stderr_reporter

VERSITYGW = GoPrograms(
    key="versitygw",
    module="github.com/versity/versitygw",
    version="v1.8.0",
    minimum_go="1.25",  # its go.mod's go line
    programs={"versitygw": "github.com/versity/versitygw/cmd/versitygw"},
)
ACCESS_KEY = "winsuite-admin"
SECRET_KEY = "winsuite-admin-secret"  # a test server's own root account: nothing outside the test knows it
READY_SECONDS = 30.0


def build(report: Reporter = stderr_reporter) -> Path:
    """The server's binary, built into ~/.cache/winsuite/bin/versitygw-<version>/ when missing."""
    return ensure_built(VERSITYGW, report)["versitygw"]


@dataclass
class S3Server:
    """One running versitygw: its endpoint, its root account, its access log."""

    endpoint: str  # http://127.0.0.1:PORT
    binary: Path
    process: subprocess.Popen[bytes]
    access_log: Path
    data: Path

    def client(self) -> Minio:
        """A client with the root account, for a test's own setup (buckets, policies, objects)."""
        return Minio(self.endpoint.removeprefix("http://"), access_key=ACCESS_KEY, secret_key=SECRET_KEY,
                     secure=False)

    def requests(self) -> collections.Counter[str]:
        """How many requests of each S3 operation (s3_GetObject, s3_ListObjectsV2 …) the server has served."""
        counts: collections.Counter[str] = collections.Counter()
        for line in self.access_log.read_text(errors="replace").splitlines():
            for word in line.split():
                if word.startswith("s3_"):
                    counts[word] += 1
                    break
        return counts

    def throttled(self) -> int:
        """How many requests the server answered with 503 SlowDown (over its --max-requests)."""
        return sum(" SlowDown " in line for line in self.access_log.read_text(errors="replace").splitlines())

    def make_bucket(self, name: str, *, public: bool = False) -> None:
        client = self.client()
        client.make_bucket(name)
        if public:
            client.set_bucket_policy(name, json.dumps({"Version": "2012-10-17", "Statement": [
                {"Effect": "Allow", "Principal": {"AWS": ["*"]}, "Action": ["s3:GetObject", "s3:ListBucket"],
                 "Resource": [f"arn:aws:s3:::{name}", f"arn:aws:s3:::{name}/*"]}]}))

    def upload_tree(self, bucket: str, prefix: str, tree: Path) -> int:
        """Every file under `tree` as bucket/prefix/<path>; how many."""
        client = self.client()
        count = 0
        for path in sorted(p for p in tree.rglob("*") if p.is_file()):
            key = "/".join(part for part in (prefix, path.relative_to(tree).as_posix()) if part)
            client.fput_object(bucket, key, str(path))
            count += 1
        return count

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@contextlib.contextmanager
def running(workdir: Path, binary: Path | None = None, *, max_requests: int = 0) -> Iterator[S3Server]:
    """A versitygw serving `workdir`/data on a free loopback port until the block ends (`max_requests` > 0 makes it
    answer 503 SlowDown to requests beyond that many at once: throttling, for real)."""
    data, sidecar = workdir / "data", workdir / "meta"
    data.mkdir(parents=True, exist_ok=True)
    sidecar.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    access_log = workdir / "access.log"
    binary = binary or build()
    argv = [str(binary), "--access", ACCESS_KEY, "--secret", SECRET_KEY, "--port", f"127.0.0.1:{port}",
            "--access-log", str(access_log), "--quiet"]
    if max_requests:
        argv += ["--max-requests", str(max_requests)]
    argv += ["posix", "--sidecar", str(sidecar), str(data)]
    with (workdir / "server.log").open("wb") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    server = S3Server(f"http://127.0.0.1:{port}", binary, process, access_log, data)
    try:
        _wait_ready(server, workdir / "server.log")
        yield server
    finally:
        server.stop()


def _wait_ready(server: S3Server, log: Path) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"versitygw exited with {server.process.returncode}: {log.read_text()[-2000:]}")
        with contextlib.suppress(Exception):
            server.client().list_buckets()
            return
        time.sleep(0.1)
    raise RuntimeError(f"versitygw did not answer within {READY_SECONDS:.0f}s: {log.read_text()[-2000:]}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def missing_prerequisite() -> str | None:
    """None when versitygw is built or can be; else what to install (a test skips with it)."""
    if VERSITYGW.built() or shutil.which("go"):
        return None
    return f"needs Go >= {VERSITYGW.minimum_go} to build {VERSITYGW.module} {VERSITYGW.version}"
