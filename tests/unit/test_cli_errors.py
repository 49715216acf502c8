"""Bad input through `python -m winsuite.cli`: exit code 4 and one stderr line naming the file and field.

One case per kind of input; the full range of mistakes is covered in-process by the golden job cases and the
per-module tests (each process here costs a second of imports).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from winsuite.errors import ExitCode
from winsuite.inputs.jobs import ENVIRONMENT

ROOT = Path(__file__).resolve().parents[2]
JOB = "apiVersion: winsuite.io/v1alpha1\nkind: Job\nname: bad\n"
EXCLUSIONS = "apiVersion: winsuite.io/v1alpha1\nkind: ExclusionList\nexclusions:\n"


@dataclasses.dataclass(frozen=True)
class Case:
    files: dict[str, str]  # file name -> content, written to a temporary directory
    args: tuple[str, ...]  # {dir} stands for that directory
    names: tuple[str, ...]  # what the error line must name: file (with {dir}) and field


CASES = {
    "bad job": Case({"job.yaml": JOB + "repoListt: x.yaml\n"}, ("list", "--job", "{dir}/job.yaml"),
                    ("{dir}/job.yaml: ", "repoListt: unknown key")),
    "bad regex in a job": Case({"job.yaml": JOB + "skip: ['(?<=x)y']\n"}, ("list", "--job", "{dir}/job.yaml"),
                               ("{dir}/job.yaml: ", "skip[0]: '(?<=x)y': invalid or unsupported Perl syntax")),
    "bad exclusion list": Case(
        {"exclusions.yaml": EXCLUSIONS + "  - {pattern: DNS, issue: https://i/1}\n"},
        ("list", "--exclusions", "{dir}/exclusions.yaml"),
        ("{dir}/exclusions.yaml#exclusions[0]: ", "reason: required")),
    "bad repo list": Case({"repo.yaml": "e2eRegistry: [e2eteam]\n"}, ("images", "--repo-list", "{dir}/repo.yaml"),
                          ("{dir}/repo.yaml: ", "e2eRegistry: expected a registry")),
    "bad regex flag": Case({}, ("list", "--focus", "a**"), ("--focus 'a**': invalid nested repetition",)),
}


def run(case: Case, directory: Path) -> subprocess.CompletedProcess[str]:
    for name, text in case.files.items():
        (directory / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if k not in ENVIRONMENT}
    args = [a.format(dir=directory) for a in case.args]
    return subprocess.run([sys.executable, "-m", "winsuite.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, subprocess.CompletedProcess[str]]]:
    """Every case as its own process, side by side."""
    directories = {label: tmp_path_factory.mktemp("cli") for label in CASES}
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        futures = {label: pool.submit(run, case, directories[label]) for label, case in CASES.items()}
        return {label: (directories[label], future.result()) for label, future in futures.items()}


@pytest.mark.parametrize("label", list(CASES))
def test_bad_input_gives_exit_4_and_one_line_naming_file_and_field(
    label: str, results: dict[str, tuple[Path, subprocess.CompletedProcess[str]]]
) -> None:
    directory, done = results[label]
    assert done.returncode == ExitCode.USAGE_ERROR, done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("winsuite: error: ")
    for fragment in CASES[label].names:
        assert fragment.format(dir=directory) in line


@pytest.mark.parametrize(("args", "prog", "says"), [
    (("--bogus",), "winsuite", "the following arguments are required: COMMAND"),
    (("run", "--bogus"), "winsuite run", "unrecognized arguments: --bogus"),
    (("report", "--format", "pdf"), "winsuite report", "argument --format: invalid choice: 'pdf'"),
    (("cluster", "up", "--bogus"), "winsuite cluster up", "unrecognized arguments: --bogus"),
], ids=["top level", "run", "report", "nested"])
def test_a_bad_flag_is_a_usage_error_of_its_command(args: tuple[str, ...], prog: str, says: str) -> None:
    """argparse's own errors exit 4 like every usage error (its 2 would read as "interrupted"), in one line."""
    done = subprocess.run([sys.executable, "-m", "winsuite.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)
    assert (done.returncode, done.stdout) == (ExitCode.USAGE_ERROR, "")
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"{prog}: error: {says}") and line.endswith(f"(see {prog} --help)")


def test_help_still_exits_0() -> None:
    done = subprocess.run([sys.executable, "-m", "winsuite.cli", "run", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == ExitCode.OK and done.stdout.startswith("usage: winsuite run")
