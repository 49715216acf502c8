"""Histories the report-cache tests write and read: two jobs with every kind of cell, and what a report reads of
them (to compare a history read with the cache against one read from the files)."""

from __future__ import annotations

from pathlib import Path

from winsuite_reports.job import History
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_job

NOW = START + 86400
ROWS = {
    "[sig-windows] pods pass": "PPPP",
    "[sig-windows] flaky one": "PKPF",
    "[sig-windows] skipped": "SSSS",
    "[sig-windows] excluded but run": "XXXX",
    "[sig-windows] new in the newest": "P___",
}
PROPERTIES = {"[sig-windows] pods pass": {"tags": "Conformance", "tier": "adapted", "category": "Core.Pods"},
              "[sig-windows] flaky one": {"ran-on": "win-0 (windows, 10.0.20348, runtime containerd://1.7.24)",
                                          "failure-class": "infrastructure", "failure-evidence": "ErrImagePull"}}


def history_of(root: Path, *, cache: bool) -> History:
    return load_history(root, now=NOW, cache=cache)


def columns(history: History) -> list[tuple[object, ...]]:
    """Everything a report reads of a history: its jobs, their rows, builds and grids, their failures clustered and
    where their rows ran."""
    return [(job.name, job.rows, job.builds, [job.cells(key) for key in job.rows], job.failures, job.placement)
            for job in history.jobs]


def remove_build(build: Path) -> None:
    for path in sorted(build.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    build.rmdir()


def write_histories(root: Path) -> Path:
    """Two jobs under `root`: ci-windows (ROWS, with PROPERTIES) and ci-linux (one row, passed then failed)."""
    write_job(root, "ci-windows", ROWS, properties=PROPERTIES, metadata={"dashboard": "sig-windows"})
    write_job(root, "ci-linux", {"[sig-node] a": "PF"})
    return root
