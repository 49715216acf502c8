"""`winsuite report` through the front door: pages or markdown, and one-line errors for user mistakes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from winsuite.cli import main
from winsuite.errors import ExitCode
from winsuite_reports.synthetic import write_job


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    write_job(
        root, "ci-windows", {"[sig-node] Pods [Conformance]": "PFP"}, metadata={"release-blocking": True}
    )
    return root


def test_the_dashboard_is_written_and_named(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--results", str(results), "--output", str(tmp_path / "out")]) == ExitCode.OK
    out = capsys.readouterr().out
    assert out == f"winsuite report: 1 tab, release verdict NOT READY: {tmp_path / 'out' / 'index.html'}\n"
    assert (tmp_path / "out" / "jobs" / "ci-windows" / "grid.html").is_file()


def test_markdown_goes_to_stdout(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--results", str(results), "--format", "markdown"]) == ExitCode.OK
    assert capsys.readouterr().out.startswith("### Release readiness: **NOT READY**\n")


def test_json_goes_to_stdout(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--results", str(results), "--format", "json", "--columns-recent", "2"]) == ExitCode.OK
    (tab,) = json.loads(capsys.readouterr().out)["tabs"]
    assert (tab["job"], tab["status"], tab["recent_columns"]) == ("ci-windows", "FLAKY",
                                                                  {"window": 2, "passed": 1, "completed": 2})


def test_options_reach_the_report(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    builds = sorted(path.name for path in (results / "ci-windows").iterdir() if path.is_dir())
    argv = ["report", "--results", str(results), "--format", "markdown", "--readiness-runs", "3"]
    assert main([*argv, "--diff", "ci-windows", builds[0], builds[2]]) == ExitCode.OK
    out = capsys.readouterr().out
    assert "runs continuously" not in out  # three runs exist, three are asked for
    assert f"**ci-windows** {builds[0]} → {builds[2]}: 0 new failures" in out


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (["--output", "{out}", "--columns-recent", "ten"], "--columns-recent ten: not an integer"),
        (
            ["--output", "{out}", "--broken-threshold", "1.5"],
            "--broken-threshold 1.5: must be between 0 and 1",
        ),
        (["--output", "{out}", "--readiness-runs", "0"], "--readiness-runs 0: must be at least 1"),
        ([], "--output DIR is required for the HTML dashboard (or use --format markdown or json)"),
        (["--format", "markdown", "--diff", "ci-linux", "1", "2"], "no job ci-linux under"),
        (["--format", "markdown", "--diff", "ci-windows", "1", "2"], "job ci-windows has no build 1"),
        (["--format", "markdown", "--blocking", "ci-linux"], "no job ci-linux under"),
    ],
)
def test_user_mistakes_are_one_line_errors(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], error: str
) -> None:
    argv = ["report", "--results", str(results), *(arg.format(out=tmp_path / "out") for arg in extra)]
    assert main(argv) == ExitCode.USAGE_ERROR
    err = capsys.readouterr().err
    assert err.startswith(f"winsuite: error: {error}")
    assert err.count("\n") == 1


@pytest.mark.parametrize("layout", ["missing", "empty"])
def test_a_results_root_without_builds_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], layout: str
) -> None:
    root = tmp_path / "results"
    if layout == "empty":
        (root / "ci-windows").mkdir(parents=True)
    assert main(["report", "--results", str(root), "--format", "markdown"]) == ExitCode.USAGE_ERROR
    assert "(expected ROOT/<job>/<build>/started.json)" in capsys.readouterr().err


def test_a_malformed_artifact_is_shown_not_raised(results: Path, tmp_path: Path) -> None:
    build = next(path for path in (results / "ci-windows").iterdir() if path.is_dir())
    (build / "artifacts" / "junit_01.xml").write_text("<testsuites><testcase")
    assert main(["report", "--results", str(results), "--output", str(tmp_path / "out")]) == ExitCode.OK
    assert "Malformed artifacts: junit_01.xml" in (tmp_path / "out/jobs/ci-windows/grid.html").read_text()


@pytest.mark.parametrize(
    ("location", "error"),
    [
        ("ftp://bucket/logs", "unknown scheme ftp:// (known: gs://, s3://)"),
        ("s3://B/logs", "'B' is not a bucket name"),
        ("gs://bucket/logs/../x", "the prefix has an empty, '.' or '..' part"),
    ],
)
def test_a_bad_bucket_url_is_a_usage_error(location: str, error: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--results", location, "--format", "markdown"]) == ExitCode.USAGE_ERROR
    err = capsys.readouterr().err
    assert error in err and err.count("\n") == 1


def test_since_keeps_the_builds_started_since(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    builds = sorted(path.name for path in (results / "ci-windows").iterdir() if path.is_dir())
    since = f"{builds[1][:4]}-{builds[1][4:6]}-{builds[1][6:8]}T{builds[1][8:10]}:{builds[1][10:12]}"
    assert main(["report", "--results", str(results), "--format", "markdown", "--since", since,
                 "--diff", "ci-windows", builds[1], builds[2]]) == ExitCode.OK
    capsys.readouterr()
    argv = ["report", "--results", str(results), "--format", "markdown", "--since", since]
    assert main([*argv, "--diff", "ci-windows", builds[0], builds[2]]) == ExitCode.USAGE_ERROR  # older: not read
    assert f"job ci-windows has no build {builds[0]}" in capsys.readouterr().err
    assert main([*argv[:-1], "last tuesday"]) == ExitCode.USAGE_ERROR
    assert "--since last tuesday: not a date" in capsys.readouterr().err


def test_compare_prints_both_sides(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    builds = sorted(path for path in (results / "ci-windows").iterdir() if path.is_dir())
    assert main(["report", "--compare", str(builds[0]), str(builds[1]), "--format", "markdown"]) == ExitCode.OK
    out = capsys.readouterr().out
    assert out.startswith("### Comparison: A ")
    assert f"| Build | ci-windows {builds[0].name} | ci-windows {builds[1].name} |" in out
    assert "| 0 | 1 | 0 | 0 | 0 | 0 | 0 |" in out  # PFP: the oldest build passed, the middle one failed
