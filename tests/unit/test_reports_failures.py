"""The Failures pages: 50 generated builds whose failure messages vary in pod names, IP addresses, durations and
timestamps cluster into the failures' causes, per job and across jobs, the same whether read at once or build by
build."""

from __future__ import annotations

import random
import re
import shutil
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from winsuite_reports import build_codec
from winsuite_reports import results
from winsuite_reports.analysis import Report
from winsuite_reports.analysis import ReportOptions
from winsuite_reports.analysis import build_report
from winsuite_reports.clusters import Cluster
from winsuite_reports.clusters import cluster_id
from winsuite_reports.clusters import issue_link
from winsuite_reports.evidence import BuildEvidence
from winsuite_reports.failures import Clustering
from winsuite_reports.failures import FailureClustering
from winsuite_reports.grid import grid_data
from winsuite_reports.prow import ParsedBuild
from winsuite_reports.render import write_dashboard
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_build
from winsuite_reports.synthetic import write_job

BUILDS = 50
NOW = START + BUILDS * 3600
PODS, STORAGE, SERVICES, IMAGES, GREEN = (
    "[sig-node] Pods should be Running [Conformance]", "[sig-storage] EmptyDir volumes should be shared",
    "[sig-network] Services should serve a NodePort", "[sig-windows] images should be pulled", "[sig-node] green")
ISSUE = "https://github.com/kubernetes/kubernetes/issues/12345"


def not_running(rng: random.Random) -> str:
    pod = f"agnhost-{rng.getrandbits(32):08x}-" + "".join(rng.choices("bcdfghjklmnpqrstvwxz2456789", k=5))
    return (f"test: pod e2e-pods-{rng.getrandbits(24):06x}/{pod} was not Running within {rng.uniform(60, 300):.2f}s: "
            f"phase Pending on node 10.1.{rng.randrange(256)}.{rng.randrange(1, 255)}")


def refused(rng: random.Random) -> str:
    address = f"10.96.{rng.randrange(256)}.{rng.randrange(1, 255)}:{rng.randrange(30000, 32768)}"
    return (f"timeout: GET http://{address}/hostname: dial tcp {address}: connect: connection refused "
            f"(gave up after {rng.randrange(1, 9)}m{rng.randrange(60)}s)")


def pull_failed(rng: random.Random) -> str:
    return (f'infrastructure: Failed to pull image "registry.invalid/e2e/agnhost:2.52": rpc error: dial tcp '
            f"10.0.{rng.randrange(256)}.{rng.randrange(1, 255)}:443: i/o timeout at "
            f"2026-01-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00Z")


# Which row fails in build n (counted from the oldest), with which cause and class.
SCHEDULE: dict[str, tuple[Callable[[int], bool], Callable[[random.Random], str], str]] = {
    PODS: (lambda n: n % 5 == 0, not_running, "test"),
    STORAGE: (lambda n: n % 10 == 1, not_running, "test"),
    SERVICES: (lambda n: n % 7 == 3, refused, "timeout"),
    IMAGES: (lambda n: n % 8 == 0, pull_failed, "infrastructure"),
}


def rows(builds: int) -> dict[str, str]:
    """Cell codes, newest build first: F where the schedule fails the row, P elsewhere."""
    codes = {row: "".join("F" if fails(n) else "P" for n in reversed(range(builds)))
             for row, (fails, _, _) in SCHEDULE.items()}
    return codes | {GREEN: "P" * builds}


def message(row: str, n: int) -> str:
    return SCHEDULE[row][1](random.Random(f"{row}/{n}")) if row in SCHEDULE else ""


def properties(row: str, n: int, code: str) -> dict[str, str]:
    found = {"ran-on": f"win-{n % 2} (windows, 10.0.20348, runtime containerd://1.7.24)"}
    if code == "F":
        found |= {"failure-class": SCHEDULE[row][2], "failure-evidence": f"observed in build {n}"}
    if row == IMAGES:
        found["excluded"] = f"excluded: needs a registry mirror ({ISSUE})"
    return found


def write(root: Path, job: str = "ci-windows", builds: int = BUILDS) -> list[str]:
    return write_job(root, job, rows(builds), message_of=message, properties_of=properties)


def report_of(root: Path, *, cache: bool = True) -> Report:
    return build_report(load_history(root, now=NOW, cache=cache), ReportOptions(), now=NOW)


def by_class(clusters: list[Cluster]) -> dict[str, Cluster]:
    found = {cluster.failure_class: cluster for cluster in clusters}
    assert len(found) == len(clusters), [cluster.key for cluster in clusters]
    return found


def test_fifty_builds_of_varying_messages_cluster_into_their_causes(tmp_path: Path) -> None:
    ids = list(reversed(write(tmp_path)))  # oldest first: ids[n] is build n
    (tab,) = report_of(tmp_path).tabs
    clusters = by_class(tab.clusters)
    assert sorted(clusters) == ["infrastructure", "test", "timeout"]
    not_running_cluster, refused_cluster = clusters["test"], clusters["timeout"]
    pull_cluster = clusters["infrastructure"]

    assert not_running_cluster.count == 10 + 5
    assert [(row.row, row.count) for row in not_running_cluster.rows] == [(PODS, 10), (STORAGE, 5)]
    assert not_running_cluster.rows[0].jobs == (("ci-windows", tuple(ids[n] for n in (45, 40, 35, 30, 25, 20, 15,
                                                                                       10, 5, 0))),)
    assert (not_running_cluster.first.build, not_running_cluster.last.build) == (ids[0], ids[45])
    assert not_running_cluster.key.startswith("test: pod e2e-pods-ID/agnhost-ID was not Running within DURATION: ")
    assert not_running_cluster.issue == ""

    assert (refused_cluster.count, [row.row for row in refused_cluster.rows]) == (7, [SERVICES])
    assert (refused_cluster.first.build, refused_cluster.last.build) == (ids[3], ids[45])
    assert refused_cluster.first.started == START + 3 * 3600

    assert (pull_cluster.count, pull_cluster.classes) == (7, (("infrastructure", 7),))
    assert pull_cluster.issue == ISSUE  # the exclusion that names its test
    assert pull_cluster.evidence == "observed in build 48"  # the newest failure's
    assert tab.clusters == sorted(tab.clusters, key=lambda cluster: -cluster.count)


def test_the_clusters_are_the_same_read_at_once_or_build_by_build(tmp_path: Path) -> None:
    at_once, by_build = tmp_path / "at-once", tmp_path / "by-build"
    write(at_once)
    write_job(by_build, "ci-windows", {row: codes[-10:] for row, codes in rows(BUILDS).items()},
              message_of=message, properties_of=properties)
    report_of(by_build)  # the cache now holds the oldest ten builds
    for n in range(10, BUILDS):
        write_build(by_build / "ci-windows", START + n * 3600, {row: codes[BUILDS - 1 - n] for row, codes in
                                                                rows(BUILDS).items()},
                    messages={row: message(row, n) for row in rows(BUILDS)},
                    properties={row: properties(row, n, codes[BUILDS - 1 - n]) for row, codes in
                                rows(BUILDS).items()})
        if n % 10 == 0:
            report_of(by_build)
    assert report_of(by_build).tabs[0].clusters == report_of(at_once, cache=False).tabs[0].clusters


def test_the_clusters_across_jobs_merge_one_cause_seen_in_two_jobs(tmp_path: Path) -> None:
    write(tmp_path)
    write_job(tmp_path, "ci-windows-serial", {SERVICES: "PFPF", GREEN: "PPPP"}, start=START + 3600,
              message_of=message, properties_of=lambda row, n, code: properties(row, n + 100, code))
    report = report_of(tmp_path)
    serial = next(tab for tab in report.tabs if tab.job.name == "ci-windows-serial")
    assert [(cluster.count, cluster.failure_class) for cluster in serial.clusters] == [(2, "timeout")]
    merged = by_class(report.clusters)
    assert merged["timeout"].count == 7 + 2
    assert merged["timeout"].jobs == ("ci-windows", "ci-windows-serial")
    assert [job for job, _ in merged["timeout"].rows[0].jobs] == ["ci-windows", "ci-windows-serial"]
    assert (merged["test"].count, merged["test"].jobs) == (15, ("ci-windows",))


def test_a_row_links_the_cluster_of_its_newest_failure(tmp_path: Path) -> None:
    write(tmp_path)
    (tab,) = report_of(tmp_path).tabs
    data: dict[str, Any] = grid_data(tab.job, lambda build: build.id, 50)
    strings, links = data["strings"], {row[0]: row[6] for row in data["rows"]}
    clusters = by_class(tab.clusters)
    assert strings[links[SERVICES]] == cluster_id(clusters["timeout"].key) == clusters["timeout"].id
    assert strings[links[GREEN]] == ""


def test_the_failures_pages_show_each_cluster(tmp_path: Path) -> None:
    write(tmp_path / "results")
    report = report_of(tmp_path / "results")
    write_dashboard(report, tmp_path / "out")
    job_page = (tmp_path / "out" / "jobs" / "ci-windows" / "failures.html").read_text()
    across = (tmp_path / "out" / "failures.html").read_text()
    for cluster in report.tabs[0].clusters:
        for page in (job_page, across):
            assert f'<tbody id="{cluster.id}">' in page
            assert f'<a href="#{cluster.id}">{cluster.count}</a>' in page
    assert f'<a href="{ISSUE}">{ISSUE}</a>' in job_page
    builds = re.findall(r'<a href="([^"]+)/">(\d{14})</a>', job_page)
    assert builds and all(href.endswith(f"/ci-windows/{build}") for href, build in builds)
    assert (tmp_path / "out" / "jobs" / "ci-windows" / builds[0][0]).is_dir()


@pytest.mark.parametrize(("excluded", "link"), [
    (f"excluded: needs a registry mirror ({ISSUE})", ISSUE),
    ("excluded: not on Windows (kubernetes/kubernetes#123)", "kubernetes/kubernetes#123"),
    ("excluded: no issue", ""),
])
def test_an_exclusions_issue_is_its_link_or_its_last_parentheses(excluded: str, link: str) -> None:
    assert issue_link(excluded) == link



class CountingClustering(FailureClustering):
    """The job's clustering, saying which builds it was made of or extended by."""

    made_of: list[int] = []
    extended_by: list[list[str]] = []

    def made(self, builds: Sequence[ParsedBuild]) -> Clustering:
        self.made_of.append(len(builds))
        return super().made(builds)

    def extended(self, state: Clustering, width: int, new: Sequence[ParsedBuild], keep: int) -> Clustering | None:
        self.extended_by.append([build.id for build in new])
        return super().extended(state, width, new, keep)


def test_a_new_build_costs_its_own_failures_not_the_historys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(results, "FailureClustering", CountingClustering)
    stored_reads: list[Path] = []
    read_stored = build_codec._decode_evidence

    def reading(stored: tuple[str, str] | None, build_dir: Path) -> BuildEvidence:
        stored_reads.append(build_dir)
        return read_stored(stored, build_dir)

    monkeypatch.setattr(build_codec, "_decode_evidence", reading)
    CountingClustering.made_of, CountingClustering.extended_by = [], []
    write(tmp_path, builds=20)
    report_of(tmp_path)
    assert CountingClustering.made_of == [20]
    new = write_build(tmp_path / "ci-windows", START + 20 * 3600, {PODS: "F", GREEN: "P"},
                      messages={PODS: message(PODS, 20)}, properties={PODS: properties(PODS, 20, "F")})
    stored_reads.clear()
    tab = report_of(tmp_path).tabs[0]
    assert CountingClustering.made_of == [20] and CountingClustering.extended_by == [[new]]
    assert stored_reads == []  # no stored build's failures were read: only the new build's, from its parse
    assert by_class(tab.clusters)["test"].last.build == new
    oldest = min(path for path in (tmp_path / "ci-windows").iterdir() if path.is_dir())
    shutil.rmtree(oldest)
    report_of(tmp_path)
    assert CountingClustering.made_of == [20, 20]  # the oldest build gone: made anew from the stored failures
    assert sorted(stored_reads) == sorted(path for path in (tmp_path / "ci-windows").iterdir() if path.is_dir())
