"""winsuite merge: shard builds of one job made one build; duplicates refused, flake attempts kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from winsuite import cli
from winsuite.errors import UsageError
from winsuite.policy.run_config import Output
from winsuite.results import junit
from winsuite.results.build import Build
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.results.prow import BuildResult
from winsuite.run.shard_files import DirectoryFiles
from winsuite.run.shard_merge import ShardBuild
from winsuite.run.shard_merge import check_shards
from winsuite.run.shard_merge import read_shard_build
from winsuite_reports.conventions import RowProperties


def shard_build(root: Path, shard: str, rows: dict[str, list[Attempt]], result: str = "SUCCESS",
                job: str = "job-a") -> Path:
    directory = root / f"shard-{shard.replace('/', '-of-')}"
    build = Build(Output(directory, directory.name))
    metadata = {"job": job, "shard": shard, "node-os": "linux"}
    build.start(1_700_000_000 + int(shard[0]), metadata)
    for name, attempts in rows.items():
        build.judged(name, attempts)
    if result:
        build.finish(BuildResult(result), metadata)
    return directory


def read(directory: Path) -> ShardBuild:
    return read_shard_build(DirectoryFiles(directory))


def merge(builds: list[Path], merged: Path) -> int:
    return cli.main(["merge", *map(str, builds), "--artifacts", str(merged)])


def row(name: str, outcome: Outcome = Outcome.PASSED, attempt: int = 1, **properties: str) -> Attempt:
    return Attempt(name, "", outcome, attempt=attempt, duration=1.5,
                   message="boom" if outcome is Outcome.FAILED else "",
                   properties=RowProperties.from_junit({"engine": "native", **properties}))


def test_rows_of_every_shard_land_in_their_phase_and_flake_attempts_are_kept(tmp_path: Path) -> None:
    one = shard_build(tmp_path, "1/2", {"junit_01.xml": [row("a"), row("b", Outcome.FAILED, 1),
                                                         row("b", Outcome.PASSED, 2)]})
    two = shard_build(tmp_path, "2/2", {"junit_01.xml": [row("c", Outcome.SKIPPED)],
                                        "junit_02.xml": [row("serial", tags="Serial")]})
    (one / "artifacts" / "b_diag").mkdir()
    (one / "artifacts" / "b_diag" / "events.txt").write_text("event")
    check_shards([read(two), read(one)])
    merged = tmp_path / "merged"
    assert merge([two, one], merged) == 0
    phase1 = junit.read(merged / "artifacts" / "junit_01.xml")
    assert [(r.name, r.outcome, r.attempt) for r in phase1] == [
        ("a", Outcome.PASSED, 1), ("b", Outcome.FAILED, 1), ("b", Outcome.PASSED, 2), ("c", Outcome.SKIPPED, 1)]
    assert [r.name for r in junit.read(merged / "artifacts" / "junit_02.xml")] == ["serial"]
    assert (merged / "artifacts" / "b_diag" / "events.txt").read_text() == "event"
    finished = json.loads((merged / "finished.json").read_text())
    assert finished["result"] == "SUCCESS" and finished["passed"] is True
    assert [s["shard"] for s in finished["metadata"]["shards"]] == ["1/2", "2/2"]
    assert "shard" not in json.loads((merged / "started.json").read_text())["metadata"]
    assert (merged / "artifacts" / "shards" / "02" / "finished.json").is_file()
    assert [(s["build"], s["files"]) for s in finished["metadata"]["shards"]] == [
        (str(one), "artifacts/shards/01/"), (str(two), "artifacts/shards/02/")]
    assert sorted(p.name for p in merged.rglob("junit*.xml")) == ["junit_01.xml", "junit_02.xml"]  # the shards' not


def test_a_test_in_two_shards_is_refused_naming_both(tmp_path: Path) -> None:
    one = shard_build(tmp_path, "1/2", {"junit_01.xml": [row("a"), row("same")]})
    two = shard_build(tmp_path, "2/2", {"junit_01.xml": [row("same", Outcome.FAILED)]})
    with pytest.raises(UsageError, match=r"duplicate rows: 'same' is in shard builds .*-1-of-2 and .*-2-of-2"):
        check_shards([read(one), read(two)])


def test_missing_repeated_and_foreign_shards_are_refused(tmp_path: Path) -> None:
    one = read(shard_build(tmp_path / "x", "1/3", {"junit_01.xml": [row("a")]}))
    three = read(shard_build(tmp_path / "y", "3/3", {"junit_01.xml": [row("c")]}))
    with pytest.raises(UsageError, match=r"shard\(s\) 2/3 missing"):
        check_shards([one, three])
    with pytest.raises(UsageError, match="given twice"):
        check_shards([one, one, three])
    other = read(shard_build(tmp_path / "z", "2/3", {"junit_01.xml": [row("b")]}, job="job-b"))
    with pytest.raises(UsageError, match="different jobs"):
        check_shards([one, other, three])


def test_a_failed_or_unfinished_shard_fails_the_merged_build(tmp_path: Path) -> None:
    one = shard_build(tmp_path, "1/2", {"junit_01.xml": [row("a")]})
    two = shard_build(tmp_path, "2/2", {"junit_01.xml": [row("b")]}, result="")
    assert merge([one, two], tmp_path / "merged") == 1
    finished = json.loads((tmp_path / "merged" / "finished.json").read_text())
    assert finished["result"] == "FAILURE" and finished["passed"] is False
    assert finished["metadata"]["shards-not-passed"] == ["2/2: did not finish"]


def test_merge_command_writes_one_build_of_the_job_and_says_what_is_wrong(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = shard_build(tmp_path, "1/2", {"junit_01.xml": [row("a")]})
    two = shard_build(tmp_path, "2/2", {"junit_01.xml": [row("b", Outcome.FAILED)]}, result="FAILURE")
    code = cli.main(["merge", str(one), str(two), "--results-root", str(tmp_path / "root"),
                     "--build-id", "20261125000000"])
    assert code == 1
    assert (tmp_path / "root" / "job-a" / "latest-build.txt").read_text() == "20261125000000"
    out = capsys.readouterr().out
    assert "winsuite: FAILURE\n  why: 2/2: FAILURE\n  1 passed, 1 failed" in out
    assert cli.main(["merge", str(one), str(one)]) == 4
    assert "given twice" in capsys.readouterr().err
    not_a_build = tmp_path / "plain"
    not_a_build.mkdir()
    (not_a_build / "started.json").write_text('{"timestamp": 1, "metadata": {"job": "j"}}')
    assert cli.main(["merge", str(not_a_build)]) == 4
    assert "not a shard build" in capsys.readouterr().err
    (not_a_build / "started.json").write_text('{"timestamp": NaN}')
    assert cli.main(["merge", str(not_a_build)]) == 4
    assert "NaN is not JSON" in capsys.readouterr().err


@pytest.mark.parametrize(("result", "rows", "cut_off"), [
    ("SUCCESS", [row("a"), row("b", Outcome.FAILED)], False),  # ended by itself: its pod's loss took nothing
    ("FAILURE", [row("a"), row("b", Outcome.FAILED)], False),
    ("ABORTED", [row("a")], True),  # a signal ended it
    ("FAILURE", [row("a"), row("b", Outcome.INTERRUPTED, interrupted="true")], True),
    ("", [row("a")], True),  # never finished
])
def test_a_shard_build_is_cut_off_when_a_signal_ended_it_or_a_row_is_interrupted(
        tmp_path: Path, result: str, rows: list[Attempt], cut_off: bool) -> None:
    build = read(shard_build(tmp_path, "1/2", {"junit_01.xml": rows}, result=result))
    assert build.cut_off is cut_off
