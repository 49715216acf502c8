"""`winsuite list --names … --format names` selects exactly what ginkgo selects (tests/unit/golden/ginkgo/).

Each case's expected.txt is what upstream `e2e.test --ginkgo.dry-run` ran for its focus/skip (regenerate:
`python -m tests.tools.ginkgo_golden --e2e-test PATH`). When an e2e.test binary is at hand, ginkgo's
selection is also recomputed live, so a stale expected.txt cannot hide a disagreement.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.tools.ginkgo_golden import ginkgo_selection
from winsuite import cli
from winsuite import paths
from winsuite.components import artifacts
from winsuite.errors import ExitCode
from winsuite.inputs.pins import load_pins
from winsuite.policy.upstream_names import read_names_file

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted(p for p in (Path(__file__).parent / "golden" / "ginkgo").iterdir() if (p / "input.yaml").is_file())
WORKERS = os.cpu_count() or 2


def focus_and_skip(case: Path) -> tuple[list[str], list[str]]:
    spec: dict[str, Any] = yaml.safe_load((case / "input.yaml").read_text())
    return list(spec.get("focus") or []), list(spec.get("skip") or [])


def names_file() -> Path:
    return paths.upstream_names_file(load_pins().kubernetes)


def test_names_are_read_as_e2e_test_list_tests_prints_them(tmp_path: Path) -> None:
    listing = (
        "The following spec names can be used with 'ginkgo run --focus/skip':\n"
        "    k8s.io/kubernetes@v1.36.3/test/e2e/apps/job.go:123: [sig-apps] Job should run [Conformance]\n"
        "\n"
        "[sig-node] a plain full name\n"
    )
    (tmp_path / "names.txt").write_text(listing)
    assert read_names_file(tmp_path / "names.txt") == [
        "[sig-apps] Job should run [Conformance]",
        "[sig-node] a plain full name",
    ]
    assert len(read_names_file(names_file())) > 7000  # the pinned list, gzip-compressed


def cli_args(case: Path) -> list[str]:
    focus, skip = focus_and_skip(case)
    args = ["list", "--names", str(names_file()), "--format", "names"]
    return args + [f"--focus={f}" for f in focus] + [f"--skip={s}" for s in skip]


@pytest.fixture(scope="module")
def cli_outputs() -> dict[str, str]:
    """What `winsuite list` prints for every case (in-process: the same `main` `python -m winsuite.cli` runs)."""
    outputs = {}
    for case in CASES:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            assert cli.main(cli_args(case)) == ExitCode.OK
        outputs[case.name] = printed.getvalue()
    return outputs


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cli_prints_what_ginkgo_selected(case: Path, cli_outputs: dict[str, str]) -> None:
    assert cli_outputs[case.name] == (case / "expected.txt").read_text()


def test_python_m_suite_cli_prints_the_same(cli_outputs: dict[str, str]) -> None:
    case = next(c for c in CASES if c.name == "sig-windows-parallel")
    done = subprocess.run([sys.executable, "-m", "winsuite.cli", *cli_args(case)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert (done.returncode, done.stderr, done.stdout) == (0, "", cli_outputs[case.name])


def find_e2e_test() -> Path | None:
    """WINSUITE_E2E_TEST, else the pinned version's binary in winsuite's cache (`winsuite cluster build --e2e-test`)."""
    if os.environ.get("WINSUITE_E2E_TEST"):
        given = Path(os.environ["WINSUITE_E2E_TEST"])
        if not (given.is_file() and os.access(given, os.X_OK)):
            pytest.fail(f"WINSUITE_E2E_TEST={given} is not an executable file")
        return given
    e2e_test = next(a for a in artifacts.catalog(load_pins()) if a.name == "e2e.test")
    return artifacts.locate(e2e_test, None)


@pytest.fixture(scope="module")
def ginkgo_selections() -> dict[str, set[str]]:
    e2e_test = find_e2e_test()
    if e2e_test is None:
        pytest.skip("needs an upstream e2e.test binary (WINSUITE_E2E_TEST, or `winsuite cluster build --e2e-test`); "
                    "the golden expected.txt files were still checked")

    def select(case: Path) -> set[str]:
        return ginkgo_selection(e2e_test, *focus_and_skip(case))

    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        return dict(zip([c.name for c in CASES], pool.map(select, CASES), strict=True))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_live_ginkgo_agrees(
    case: Path, ginkgo_selections: dict[str, set[str]], cli_outputs: dict[str, str]
) -> None:
    selected = ginkgo_selections[case.name]
    names = read_names_file(names_file())
    # ginkgo's JUnit appends component constraints to a few names ("… [kubelet: [>=1.36]]").
    decorated = selected - set(names)
    expected = [n for n in names if n in selected or any(d.startswith(n + " [") for d in decorated)]
    assert cli_outputs[case.name].splitlines() == expected
