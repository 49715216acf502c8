"""Where a run writes the dashboard of its results root: under a root the user gave, beside the default one."""

from __future__ import annotations

from pathlib import Path

import pytest

from winsuite.run.dashboard import output_of


def test_a_given_results_root_keeps_the_dashboard_under_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert output_of(tmp_path / "results" / "winsuite-embedded") == tmp_path / "results" / "_dashboard"
    assert output_of(Path("ci/results/job")) == Path("ci/results/_dashboard")
    assert output_of(Path("elsewhere/_artifacts/job")) == Path("elsewhere/_artifacts/_dashboard")


def test_the_default_results_root_keeps_the_dashboard_beside_it(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert output_of(Path("_artifacts/winsuite-embedded")) == Path("_dashboard")
    assert output_of(tmp_path / "_artifacts" / "winsuite-embedded") == tmp_path / "_dashboard"  # named, the same
