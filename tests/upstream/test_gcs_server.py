"""The loopback GCS server: buckets, objects through its JSON API, a stop that ends its process, and no server
left behind by a session that dies."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.tools import gcs_server
from tests.tools.gcs_server import GcsError
from tests.tools.gcs_server import GcsServer

ROOT = Path(__file__).resolve().parents[2]


def test_objects_round_trip_through_the_json_api(gcs: GcsServer, tmp_path: Path) -> None:
    tree = tmp_path / "ci-job"
    (tree / "100" / "artifacts").mkdir(parents=True)
    (tree / "100" / "started.json").write_text('{"timestamp": 1}')
    (tree / "100" / "artifacts" / "junit_01.xml").write_bytes(b"<testsuites/>")
    (tree / "latest-build.txt").write_text("100")
    gcs.create_bucket("round-trip")
    assert gcs.upload_tree("round-trip", "logs/ci-job", tree) == 3
    gcs.upload("round-trip", "odd name/ü & ?#.txt", b"\x00\xff")
    assert sorted(gcs.list("round-trip", "logs/")) == [
        "logs/ci-job/100/artifacts/junit_01.xml", "logs/ci-job/100/started.json", "logs/ci-job/latest-build.txt"]
    assert gcs.download("round-trip", "logs/ci-job/100/started.json") == b'{"timestamp": 1}'
    assert gcs.download("round-trip", "odd name/ü & ?#.txt") == b"\x00\xff"
    assert gcs.client_env() == {"STORAGE_EMULATOR_HOST": f"127.0.0.1:{gcs.port}"}


def test_a_missing_object_is_an_error_that_says_which(gcs: GcsServer) -> None:
    gcs.create_bucket("missing")
    with pytest.raises(GcsError, match=r"GET /storage/v1/b/missing/o/nothing\?alt=media: HTTP 404"):
        gcs.download("missing", "nothing")


def test_stop_ends_the_server_process(gcs: GcsServer, tmp_path: Path) -> None:
    server = gcs_server.start(tmp_path, gcs_server.build())
    assert server.port != gcs.port
    server.stop()
    assert server.process.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(server.pid, 0)


def test_a_session_killed_before_its_clean_up_leaves_no_server_behind(gcs: GcsServer, tmp_path: Path) -> None:
    script = ("import os, pathlib, sys; from tests.tools import gcs_server; "
              f"server = gcs_server.start(pathlib.Path({str(tmp_path)!r}), gcs_server.build()); "
              "print(server.pid, flush=True); os._exit(0)")
    started = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60,
                             check=True)
    pid = int(started.stdout)
    deadline = time.monotonic() + 10
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _running(pid)


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False
