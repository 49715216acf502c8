"""`winsuite report --compare A B` against golden files: tests/unit/golden/compare/<case>/input.yaml describes two
builds; expected.md is the markdown comparison, expected.html the page (see the README beside the cases)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from winsuite_reports.compare import compare
from winsuite_reports.job import Job
from winsuite_reports.markdown import compare_markdown
from winsuite_reports.model import PlanItem
from winsuite_reports.render import write_compare
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_build

GOLDEN = Path(__file__).parent / "golden" / "compare"
CASES = sorted(path for path in GOLDEN.iterdir() if (path / "input.yaml").is_file())


def side(root: Path, spec: dict[str, Any]) -> tuple[str, Job]:
    """One build written in the prow layout and read back as `--compare` reads a build directory."""
    build = write_build(root / spec["job"], START, spec["cells"], metadata=spec.get("metadata"),
                        properties=spec.get("properties"))
    (job,) = load_history(root / spec["job"] / build, now=START).jobs
    return spec["label"], job


def check(path: Path, actual: str, config: pytest.Config) -> None:
    if config.getoption("--update-golden"):
        path.write_text(actual)
        return
    assert path.is_file(), f"{path} is missing; create it with `pytest {__file__} --update-golden`"
    assert actual == path.read_text(), f"{path}: output differs (`--update-golden` rewrites it)"


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_comparison_matches_golden(case: Path, tmp_path: Path, pytestconfig: pytest.Config) -> None:
    spec = yaml.safe_load((case / "input.yaml").read_text())
    plan = [PlanItem(item["id"], item["tier"], item["title"], item["tests"]) for item in spec.get("plan", [])]
    comparison = compare(side(tmp_path / "a", spec["a"]), side(tmp_path / "b", spec["b"]), plan)
    check(case / "expected.md", compare_markdown(comparison), pytestconfig)
    page = write_compare(comparison, tmp_path / "out", generated=START, dashboard=False)
    check(case / "expected.html", page.read_text(), pytestconfig)
