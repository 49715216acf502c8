"""`winsuite publish` to a directory: prow's layout, latest-build.txt, a retry that finishes a half-done upload,
and a build id the destination holds for another build refused."""

from __future__ import annotations

import filecmp
import json
import shutil
from pathlib import Path

import pytest

from winsuite.cli import main
from winsuite.errors import ExitCode
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_build


def build_of(root: Path, started: int = START) -> Path:
    build = write_build(root / "ci-windows", started, {"[sig-node] Pods should run": "P", "[sig-node] b": "F"})
    build_dir = root / "ci-windows" / build
    (build_dir / "artifacts" / "case-1").mkdir()
    (build_dir / "artifacts" / "case-1" / "pod.yaml").write_text("kind: Pod\n")
    (build_dir / "build-log.txt").write_text("a run\n")
    return build_dir


def same_tree(left: Path, right: Path) -> bool:
    files = sorted(p.relative_to(left) for p in left.rglob("*") if p.is_file())
    other = sorted(p.relative_to(right) for p in right.rglob("*") if p.is_file())
    return files == other and all(filecmp.cmp(left / f, right / f, shallow=False) for f in files)


def test_a_build_is_published_in_prow_layout_and_named_latest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build_dir = build_of(tmp_path / "local")
    dest = tmp_path / "bucket" / "logs"
    assert main(["publish", str(build_dir), str(dest)]) == ExitCode.OK
    assert same_tree(build_dir, dest / "ci-windows" / build_dir.name)
    assert (dest / "ci-windows" / "latest-build.txt").read_text() == build_dir.name
    assert "6 file(s) uploaded, 0 already there; latest-build.txt names it" in capsys.readouterr().out
    assert main(["publish", str(build_dir), str(dest)]) == ExitCode.OK  # idempotent
    assert "0 file(s) uploaded, 6 already there" in capsys.readouterr().out


def test_a_retry_finishes_a_half_done_publish(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build_dir = build_of(tmp_path / "local")
    dest = tmp_path / "bucket"
    half = dest / "ci-windows" / build_dir.name
    half.mkdir(parents=True)
    shutil.copy(build_dir / "started.json", half / "started.json")  # what an interrupted publish leaves first
    (half / "build-log.txt").write_text("a run\n")
    assert main(["publish", str(build_dir), str(dest)]) == ExitCode.OK
    assert same_tree(build_dir, half)
    assert "4 file(s) uploaded, 2 already there" in capsys.readouterr().out


def test_another_build_with_the_same_id_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build_dir = build_of(tmp_path / "local")
    dest = tmp_path / "bucket"
    theirs = dest / "ci-windows" / build_dir.name
    theirs.mkdir(parents=True)
    (theirs / "started.json").write_text(json.dumps({"timestamp": START, "node": "elsewhere"}))
    assert main(["publish", str(build_dir), str(dest)]) == ExitCode.USAGE_ERROR
    err = capsys.readouterr().err
    assert "holds another build with this id (its started.json differs); nothing overwritten" in err
    assert err.count("\n") == 1
    assert sorted(p.name for p in theirs.iterdir()) == ["started.json"]


def test_latest_build_is_never_moved_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    older, newer = build_of(tmp_path / "a", START), build_of(tmp_path / "b", START + 3600)
    dest = tmp_path / "bucket"
    assert main(["publish", str(newer), str(dest)]) == ExitCode.OK
    assert main(["publish", str(older), str(dest)]) == ExitCode.OK
    assert (dest / "ci-windows" / "latest-build.txt").read_text() == newer.name
    assert "latest-build.txt names a newer build" in capsys.readouterr().out


def test_a_directory_that_is_not_a_build_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["publish", str(tmp_path), str(tmp_path / "dest")]) == ExitCode.USAGE_ERROR
    assert "not a build directory (no started.json or finished.json)" in capsys.readouterr().err
