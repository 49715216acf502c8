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

from winsuite.inputs.cluster_spec import ClusterType
from winsuite.inputs.run_modes import NodeLogMode
from winsuite.policy.run_config import RUN_FILE
from winsuite.policy.run_config import Output
from winsuite.policy.run_config import RunConfig
from winsuite.policy.run_config import resolve_run
from winsuite.policy.shards import Shard
from winsuite.results import junit
from winsuite.results.build import Build
from winsuite.results.events import ProtocolError
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.results.prow import BuildResult
from winsuite.run.incluster import image
from winsuite.run.incluster import protocol
from winsuite.run.incluster.objects import RunObjects
from winsuite.run.incluster.objects import job_manifest
from winsuite.run.incluster.received import ArchiveFiles
from winsuite.run.incluster.start import for_pods
from winsuite.run.incluster.worker import shard_run
from winsuite.run.shard_merge import finished_metadata
from winsuite.run.shard_merge import merge_into
from winsuite.run.shard_merge import merged_metadata
from winsuite.run.shard_merge import read_shard_build
from winsuite_reports.conventions import RowProperties


@pytest.mark.parametrize("name", ["embedded", "sig-windows-parallel"])
def test_the_run_handed_to_the_pods_reads_back_whole_and_names_no_file_of_this_machine(
        name: str, tmp_path: Path) -> None:
    run = dataclasses.replace(resolve_run(name, {}, environ={}, run_id="20261125000000-abcd"),
                              output=Output(tmp_path / "build", "20261125000000", tmp_path))
    shards = [Shard(1, ("a",), 30.0), Shard(2, ("b", "c"), 60.0)]
    handed = for_pods(run, shards)
    handed.save(tmp_path / RUN_FILE)
    again = RunConfig.load(tmp_path / RUN_FILE)
    assert again == handed
    assert again.job.cluster.type == ClusterType.IN_CLUSTER and again.node_logs == NodeLogMode.NEVER
    assert again.shard_plan == tuple(shards) and again.facts is None
    assert (again.exclusions, again.repo_list, again.images) == (run.exclusions, run.repo_list, run.images)
    assert again.job.artifacts is None and again.job.e2e_test is None
    shard = shard_run(tmp_path, tmp_path / "results", 1)
    assert (str(shard.shard), shard.run_id, shard.layout.build_id) == ("2/2", "20261125000000-abcd-2", "20261125000000")
    assert shard.layout.build_dir == tmp_path / "results" / "shard-2"


def shard_build_dir(root: Path, rows: list[Attempt]) -> Path:
    """A shard's build as `winsuite shard-worker` leaves it, before it sends it."""
    directory = root / "shard-1"
    build = Build(Output(directory, "20261125000000"))
    build.start(1_700_000_000, {"job": "j", "shard": "1/1", "node-os": "linux"})
    build.judged("junit_01.xml", rows)
    (directory / "build-log.txt").write_text("the shard's log\n")
    (directory / "artifacts" / "diag").mkdir(parents=True)
    (directory / "artifacts" / "diag" / "events.txt").write_text("x" * 200_000)
    (directory / "artifacts" / "nodes").mkdir()
    (directory / "artifacts" / "nodes" / "collection.txt").write_text("node")
    (directory / "artifacts" / "winsuite-events_01.jsonl").write_text("{}\n")
    (directory / "artifacts" / "discovery.json").write_text('{"from": "the shard"}')
    build.finish(BuildResult.FAILURE, {"job": "j", "shard": "1/1", "kubernetes-version": "v1.36.3"})
    return directory


def received(directory: Path, code: int = 1) -> protocol.BuildReceiver:
    receiver = protocol.BuildReceiver()
    for message in protocol.build_messages(directory, code):
        receiver.add(message)
    return receiver


def test_rows_and_builds_travel_through_log_lines(tmp_path: Path) -> None:
    attempt = Attempt("[sig-node] a test", "n", Outcome.FAILED, 2, 1.5, "boom", "details",
                      RowProperties(engine="native"))
    directory = shard_build_dir(tmp_path, [attempt])
    lines = [protocol.row(1, attempt, final=False).line(), "plain output of the shard",
             *(m.line() for m in protocol.build_messages(directory, 1))]
    messages = [protocol.parse(line) for line in lines]
    assert messages[1] is None
    assert messages[0] is not None and messages[0].attempt == attempt
    receiver = protocol.BuildReceiver()
    for message in messages[2:]:
        assert message is not None
        receiver.add(message)
    assert receiver.complete and receiver.code == 1
    files = ArchiveFiles(receiver.archive, "shard 1/1")
    assert files.read("artifacts/diag/events.txt") == b"x" * 200_000
    assert (files.json("finished.json") or {})["result"] == "FAILURE"
    ((name, (row,)),) = files.junit().items()
    assert (name, row.name, row.outcome, row.attempt, row.message) == ("junit_01.xml", attempt.name,
                                                                      Outcome.FAILED, 2, "boom")


def test_a_received_build_merges_as_objects_its_files_straight_to_their_places(tmp_path: Path) -> None:
    rows = [Attempt("[sig-node] passes", "n", Outcome.PASSED, properties=RowProperties(engine="native"))]
    shard = read_shard_build(ArchiveFiles(received(shard_build_dir(tmp_path / "pod", rows)).archive, "shard 1/1"))
    run_dir = tmp_path / "run"
    (run_dir / "artifacts").mkdir(parents=True)
    (run_dir / "artifacts" / "discovery.json").write_text('{"from": "the run"}')
    build = Build(Output(run_dir, "b"))
    merge_into([shard], build)
    assert [r.name for r in build.rows] == ["[sig-node] passes"]
    assert [r.name for r in junit.read(run_dir / "artifacts" / "junit_01.xml")] == ["[sig-node] passes"]
    own = run_dir / "artifacts" / "shards" / "01"
    assert sorted(p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file()) == [
        "artifacts/diag/events.txt", "artifacts/discovery.json", "artifacts/junit_01.xml",
        "artifacts/shards/01/build-log.txt", "artifacts/shards/01/finished.json",
        "artifacts/shards/01/metadata.json", "artifacts/shards/01/nodes/collection.txt",
        "artifacts/shards/01/started.json", "artifacts/shards/01/winsuite-events_01.jsonl"]
    assert (own / "build-log.txt").read_text() == "the shard's log\n"
    assert (run_dir / "artifacts" / "discovery.json").read_text() == '{"from": "the run"}'  # the run's own stays
    assert merged_metadata([shard])["shards"] == [{"shard": "1/1", "result": "FAILURE",
                                                   "files": "artifacts/shards/01/"}]  # no directory to name
    assert finished_metadata([shard], {})["kubernetes-version"] == "v1.36.3"


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


def test_a_build_with_a_member_outside_it_is_refused() -> None:
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
    assert receiver.complete
    with pytest.raises(ProtocolError, match="not a file of a build"):
        ArchiveFiles(receiver.archive, "shard 1/1")


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
