"""The environment as column headers: the axes a job's builds record, and what changed from the last green build to
the first red one."""

from __future__ import annotations

from pathlib import Path

from winsuite_reports.environment import UNRECORDED
from winsuite_reports.environment import recorded_axes
from winsuite_reports.job import Job
from winsuite_reports.regression import green_to_red
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_build

WS2022 = {"kubernetes-version": "v1.36.3", "windows-builds": "10.0.20348.2582",
          "container-runtime-windows": "containerd://1.7.20", "kubelet-version-windows": "v1.36.3"}
WS2025 = {**WS2022, "windows-builds": "10.0.26100.1742", "container-runtime-windows": "containerd://2.1.0"}


def job_of(tmp_path: Path, builds: list[tuple[dict[str, str], dict[str, str]]]) -> Job:
    """Builds given oldest first as (metadata, cells)."""
    for age, (metadata, cells) in enumerate(builds):
        write_build(tmp_path / "ci-windows", START + 3600 * age, cells, metadata=metadata)
    (job,) = load_history(tmp_path, now=START).jobs
    return job


def test_the_axes_shown_are_those_the_builds_record(tmp_path: Path) -> None:
    job = job_of(tmp_path, [({}, {"a": "P"}), (WS2022, {"a": "P"})])
    assert [axis.label for axis in recorded_axes(job.builds)] == [
        "Kubernetes", "Windows builds", "Runtime (Windows)", "Kubelet (Windows)"]
    assert [axis.label for axis in recorded_axes(job.builds[1:])] == ["Kubernetes"]  # always a header row


def test_facts_only_simulated_nodes_report_are_no_axis(tmp_path: Path) -> None:
    simulated = {"kubernetes-version": "v1.36.3", "simulated-windows-builds": "10.0.20348.2582",
                 "simulated-container-runtime-windows": "containerd://1.7.20",
                 "simulated-kubelet-version-windows": "v1.36.3", "container-runtime-linux": "containerd://1.7.24"}
    job = job_of(tmp_path, [(simulated, {"a": "P"})])
    assert [axis.label for axis in recorded_axes(job.builds)] == ["Kubernetes", "Runtime (Linux)"]


def test_green_to_red_names_the_axes_that_changed_and_the_tests_that_broke(tmp_path: Path) -> None:
    job = job_of(tmp_path, [
        (WS2022, {"a": "F", "b": "P", "c": "P"}),  # an older red: not the newest regression
        (WS2022, {"a": "P", "b": "P", "c": "P"}),  # the last green
        (WS2025, {"a": "P", "b": "F", "c": "F"}),  # the first red after it
        (WS2025, {"a": "F", "b": "F", "c": "F"}),
    ])
    regression = green_to_red(job)
    assert regression is not None
    assert (regression.green.id, regression.red.id) == (job.builds[2].id, job.builds[1].id)
    assert [(c.axis.label, c.before, c.after) for c in regression.changed] == [
        ("Windows builds", "10.0.20348.2582", "10.0.26100.1742"),
        ("Runtime (Windows)", "containerd://1.7.20", "containerd://2.1.0"),
    ]
    assert [c.axis.label for c in regression.environment if not c.changed] == ["Kubernetes", "Kubelet (Windows)"]
    assert regression.newly_failing == ["b", "c"]


def test_an_axis_one_build_does_not_record_is_shown_as_unrecorded(tmp_path: Path) -> None:
    job = job_of(tmp_path, [({"kubernetes-version": "v1.36.3"}, {"a": "P"}), (WS2022, {"a": "F"})])
    regression = green_to_red(job)
    assert regression is not None
    assert ("Windows builds", UNRECORDED, "10.0.20348.2582") in [
        (c.axis.label, c.before, c.after) for c in regression.changed]


def test_a_job_that_never_went_from_green_to_red_has_no_regression(tmp_path: Path) -> None:
    assert green_to_red(job_of(tmp_path / "green", [(WS2022, {"a": "P"}), (WS2022, {"a": "P"})])) is None
    assert green_to_red(job_of(tmp_path / "red", [(WS2022, {"a": "F"}), (WS2022, {"a": "F"})])) is None
