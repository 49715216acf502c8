"""The pure parts of a run inside the cluster: the job handed to the pods, the log protocol, the Job's manifest."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import os
import tarfile
from pathlib import Path

import pytest
import yaml

from winsuite.inputs.job_document import job_document
from winsuite.inputs.jobs import load_job
from winsuite.inputs.jobs import resolve_job_path
from winsuite.results.events import ProtocolError
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.run.incluster import image
from winsuite.run.incluster import protocol
from winsuite.run.incluster.objects import RunObjects
from winsuite.run.incluster.objects import job_manifest


@pytest.mark.parametrize("name", ["embedded", "sig-windows-parallel"])
def test_a_job_written_for_the_pods_reads_back_as_the_same_job(name: str, tmp_path: Path) -> None:
    job = load_job(resolve_job_path(name))
    files = {path: f"file-{index}.yaml" for index, path in enumerate([job.repo_list or "", *job.exclusions])}
    for path, local in files.items():
        if path:
            (tmp_path / local).write_text(Path(path).read_text())
    written = tmp_path / "job.yaml"
    written.write_text(yaml.safe_dump(job_document(job, {"type": "in-cluster"}, files)))
    again = load_job(written)
    assert again.cluster.type == "in-cluster"
    assert again.exclusions == tuple(str(tmp_path / files[p]) for p in job.exclusions)
    same = ("source", "cluster", "repo_list", "exclusions", "e2e_test", "artifacts")
    assert dataclasses.replace(again, **{f: getattr(job, f) for f in same}) == job


def test_rows_and_builds_travel_through_log_lines(tmp_path: Path) -> None:
    build = tmp_path / "build"
    (build / "artifacts" / "diag").mkdir(parents=True)
    (build / "finished.json").write_text("{}")
    (build / "artifacts" / "diag" / "events.txt").write_text("x" * 200_000)
    attempt = Attempt("[sig-node] a test", "n", Outcome.FAILED, 2, 1.5, "boom", "details", {"engine": "native"})
    lines = [protocol.row(1, attempt, final=False).line(), "plain output of the shard",
             *(m.line() for m in protocol.build_messages(build, 1))]
    messages = [protocol.parse(line) for line in lines]
    assert messages[1] is None
    assert messages[0] is not None and messages[0].attempt == attempt
    receiver = protocol.BuildReceiver()
    for message in messages[2:]:
        assert message is not None
        receiver.add(message)
    assert receiver.complete and receiver.code == 1
    receiver.extract(tmp_path / "out")
    assert (tmp_path / "out" / "artifacts" / "diag" / "events.txt").read_text() == "x" * 200_000


def test_a_build_cut_short_is_not_taken_for_a_whole_one(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "f").write_bytes(os.urandom(200_000))  # incompressible: several chunks
    messages = list(protocol.build_messages(tmp_path / "b", 0))
    receiver = protocol.BuildReceiver()
    for message in messages[:1] + messages[-1:]:
        receiver.add(message)
    assert not receiver.complete and "cut short" in receiver.problem


def test_a_torn_line_is_ignored_and_an_unknown_kind_refused() -> None:
    assert protocol.parse(protocol.PREFIX + '{"kind": "row", "pha') is None
    with pytest.raises(ProtocolError, match="unknown shard message"):
        protocol.parse(protocol.PREFIX + '{"kind": "teleport"}')


def test_a_build_with_a_member_outside_it_is_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("../escape")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    data = buffer.getvalue()
    receiver = protocol.BuildReceiver()
    receiver.add(protocol.Message(protocol.Kind.BUILD, {"data": base64.b64encode(data).decode()}))
    receiver.add(protocol.Message(protocol.Kind.END, {"code": 0, "bytes": len(data),
                                                      "sha256": hashlib.sha256(data).hexdigest()}))
    with pytest.raises(ProtocolError, match="not a file of a build"):
        receiver.extract(tmp_path / "out")
    assert not (tmp_path / "escape").exists()


def test_the_job_is_indexed_never_retried_and_pinned_to_the_given_linux_nodes() -> None:
    objects = RunObjects("20261125-abcd")
    job = job_manifest(objects, shards=3, image="img", nodes=["linux-b", "linux-a"], deadline_seconds=100,
                       pull_policy="Never")
    spec = job["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 3, 3)
    assert spec["backoffLimitPerIndex"] == 0 and spec["maxFailedIndexes"] == 3
    pod = spec["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["values"] == ["linux-a", "linux-b"]
    assert "tolerations" not in pod  # simulated nodes are tainted: never tolerated
    assert pod["containers"][0]["securityContext"]["runAsNonRoot"] is True
    assert job["metadata"]["namespace"] == "winsuite-run-20261125-abcd"


def test_the_image_has_this_machines_interpreter_where_its_entrypoint_names_it() -> None:
    # Whatever this machine's Python is (Debian's, pyenv's): the interpreter is copied to the image's own prefix.
    entries = {entry.path: entry for entry in image.system_layer().entries}
    assert entries[image.PYTHON].source == image.interpreter()
    assert entries["/usr/bin/python3"].link == image.PYTHON
    assert image.STDLIB.startswith(f"{image.PYTHON_HOME}/lib/python3.")
    assert image.ENV["PYTHONHOME"] == image.PYTHON_HOME


def test_libpython_is_also_where_an_interpreter_relative_to_itself_looks() -> None:
    libraries = [Path("/opt/python/lib/libpython3.12.so.1.0"), Path("/lib/x86_64-linux-gnu/libz.so.1")]
    (link,) = image.libpython_links(libraries)
    assert (link.path, link.link) == (f"{image.PYTHON_HOME}/lib/libpython3.12.so.1.0",
                                      "/opt/python/lib/libpython3.12.so.1.0")
