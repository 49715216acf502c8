"""The Failures pages' clusters: a job's (reports.failures), and every job's merged across jobs as triage's global
clustering merges them, each with its count, tests, jobs and builds, first and last seen, failure classes, and the
issue of an exclusion that names one of its tests."""

from __future__ import annotations

import functools
import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from winsuite_reports.evidence import CLASS_ORDER
from winsuite_reports.failures import Occurrence
from winsuite_reports.job import Job
from winsuite_reports.triage import find_match

_LINK = re.compile(r"https?://[^\s)\]]+")
_LAST_PARENTHESES = re.compile(r"\(([^()]+)\)\s*$")


@dataclass(frozen=True)
class Seen:
    """A build a cluster's failure happened in."""

    started: int  # epoch seconds
    job: str
    build: str


@dataclass(frozen=True)
class ClusterRow:
    """One test of a cluster: its failures there, per job the builds they happened in, newest first."""

    row: str
    count: int
    jobs: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class Cluster:
    id: str  # a digest of its key: the page anchor a grid row links to, the same from report to report
    key: str  # the normalised text that started it
    text: str  # its first failure's whole text
    evidence: str  # its newest failure's evidence
    count: int
    flaky: int  # failures of rows that passed on a retry in the same build
    classes: tuple[tuple[str, int], ...]  # failures per class, in CLASS_ORDER
    rows: tuple[ClusterRow, ...]  # most failures first
    first: Seen
    last: Seen
    issue: str  # an exclusion's issue, when one names a test of the cluster

    @property
    def failure_class(self) -> str:
        """The class most of its failures have."""
        return max(self.classes, key=lambda pair: pair[1])[0] if self.classes else ""

    @functools.cached_property
    def jobs(self) -> tuple[str, ...]:
        return tuple(sorted({job for row in self.rows for job, _ in row.jobs}))


def cluster_id(key: str) -> str:
    return "c" + hashlib.blake2b(key.encode(), digest_size=6).hexdigest()


def job_clusters(job: Job) -> list[Cluster]:
    """The job's clusters in the order they started."""
    clustering = job.failures
    if clustering is None:
        return []
    started = {build.id: build.started for build in job.builds}
    grouped: list[list[Occurrence]] = [[] for _ in clustering.keys]
    for occurrence in clustering.occurrences:
        grouped[occurrence.cluster].append(occurrence)
    return [_cluster(key, sample, occurrences, job, started)
            for key, sample, occurrences in zip(clustering.keys, clustering.samples, grouped, strict=True)
            if occurrences]


def _cluster(key: str, sample: str, occurrences: list[Occurrence], job: Job, started: dict[str, int]) -> Cluster:
    """A cluster of one job, its `occurrences` oldest first."""
    per_row: dict[str, list[str]] = {}
    for occurrence in occurrences:
        per_row.setdefault(occurrence.row, []).append(occurrence.build)
    rows = tuple(ClusterRow(row, len(builds), ((job.name, tuple(reversed(builds))),))
                 for row, builds in per_row.items())
    classes = Counter(occurrence.failure_class for occurrence in occurrences)
    first, last = occurrences[0], occurrences[-1]
    return Cluster(
        id=cluster_id(key), key=key, text=sample,
        evidence=next((o.evidence for o in reversed(occurrences) if o.evidence), ""),
        count=len(occurrences), flaky=sum(o.flaky for o in occurrences),
        classes=tuple((name, classes[name]) for name in CLASS_ORDER if classes[name]),
        rows=_rows_sorted(rows),
        first=Seen(started.get(first.build, 0), job.name, first.build),
        last=Seen(started.get(last.build, 0), job.name, last.build),
        issue=next((link for row in per_row if (link := issue_link(_excluded(job, row)))), ""),
    )


def _excluded(job: Job, row: str) -> str:
    info = job.rows.get(row)
    return info.excluded if info is not None else ""


def issue_link(excluded: str) -> str:
    """The issue an exclusion's reason names ("excluded: <reason> (<issue>)"): its first link, else the text in its
    last parentheses."""
    link = _LINK.search(excluded)
    if link:
        return link.group(0)
    last = _LAST_PARENTHESES.search(excluded)
    return last.group(1).strip() if last else ""


def across_jobs(per_job: Sequence[Sequence[Cluster]]) -> list[Cluster]:
    """Every job's clusters (each job's in the order they started) merged where their keys match (triage's
    find_match), most failures first."""
    merged: list[list[Cluster]] = []
    index: dict[str, int] = {}  # a merged cluster's key -> its place
    for clusters in per_job:
        for cluster in clusters:
            found = index.get(cluster.key)
            if found is None:
                match = find_match(cluster.key, index)
                found = index[match] if match is not None else None
            if found is None:
                index[cluster.key] = len(merged)
                merged.append([cluster])
            else:
                merged[found].append(cluster)
    return most_failures_first([_merged(parts) for parts in merged])


def _merged(parts: list[Cluster]) -> Cluster:
    if len(parts) == 1:
        return parts[0]
    head = parts[0]
    jobs_of: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for part in parts:
        for row in part.rows:
            jobs_of.setdefault(row.row, []).extend(row.jobs)
    rows = tuple(ClusterRow(row, sum(len(builds) for _, builds in jobs), tuple(jobs)) for row, jobs in jobs_of.items())
    classes: Counter[str] = Counter()
    for part in parts:
        classes.update(dict(part.classes))
    last = max(parts, key=lambda part: (part.last.started, part.last.build))
    return Cluster(
        id=head.id, key=head.key, text=head.text, evidence=last.evidence or head.evidence,
        count=sum(part.count for part in parts), flaky=sum(part.flaky for part in parts),
        classes=tuple((name, classes[name]) for name in CLASS_ORDER if classes[name]),
        rows=_rows_sorted(rows),
        first=min((part.first for part in parts), key=lambda seen: (seen.started, seen.build)),
        last=last.last,
        issue=next((part.issue for part in parts if part.issue), ""),
    )


def _rows_sorted(rows: Sequence[ClusterRow]) -> tuple[ClusterRow, ...]:
    return tuple(sorted(rows, key=lambda row: (-row.count, row.row)))


def most_failures_first(clusters: Sequence[Cluster]) -> list[Cluster]:
    return sorted(clusters, key=lambda cluster: (-cluster.count, cluster.key))


def row_clusters(job: Job) -> dict[str, str]:
    """Each failed row's cluster (of its newest failure): where its grid row links."""
    clustering = job.failures
    if clustering is None:
        return {}
    newest = {o.row: o.cluster for o in clustering.occurrences}
    ids = {cluster: cluster_id(clustering.keys[cluster]) for cluster in set(newest.values())}
    return {row: ids[cluster] for row, cluster in newest.items()}
