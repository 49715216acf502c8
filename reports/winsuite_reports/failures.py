"""A job's failures clustered as go.k8s.io/triage clusters them, in the order they happened, so that a new build only
adds its own failures to the clusters a report kept (reports.derived).

Triage clusters each test's failures (cluster_local), then merges those clusters across tests (cluster_global): a
failure joins the first cluster of its test whose text it matches (reports.triage.find_match), else starts one,
which joins the first global cluster its text matches, else starts one. Triage takes the biggest clusters first; here
failures are taken oldest build first (rows by name within a build), which gives the same clusters whether a history
is read at once or build by build. A cluster's key is the normalised text of the failure that started it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import NamedTuple

from winsuite_reports.build_codec import StoredText
from winsuite_reports.build_codec import appended
from winsuite_reports.build_codec import dumps
from winsuite_reports.build_codec import stored_count
from winsuite_reports.build_codec import stored_text
from winsuite_reports.evidence import Failure
from winsuite_reports.prow import ParsedBuild
from winsuite_reports.triage import find_match


class Occurrence(NamedTuple):
    """One failure of one build, in the cluster it joined (a tuple: a long history stores and reads thousands)."""

    build: str
    row: str
    cluster: int  # index into Clustering.keys
    failure_class: str
    evidence: str
    flaky: bool
    infra: bool


@dataclass
class Clustering:
    """A job's clusters and every failure in them, oldest first."""

    keys: list[str] = field(default_factory=list)  # each cluster's key, in the order the clusters started
    samples: list[str] = field(default_factory=list)  # each cluster's first failure's whole text
    local: dict[str, dict[str, int]] = field(default_factory=dict)  # row -> its clusters' keys -> cluster
    # row -> every normalised text of its failures -> the cluster it joined: a text met again goes where it went
    placed: dict[str, dict[str, int]] = field(default_factory=dict)
    occurrences: list[Occurrence] = field(default_factory=list)
    builds: list[str] = field(default_factory=list)  # the builds read, oldest first
    _index: dict[str, int] = field(default_factory=dict, repr=False)  # key -> cluster
    # the builds and occurrences as the report's cache holds them, when read from it (both only grow)
    _stored: tuple[StoredText | None, StoredText | None] = field(default=(None, None), repr=False, compare=False)

    def add_build(self, build: str, failures: Sequence[Failure]) -> None:
        self.builds.append(build)
        for failure in failures:
            cluster = self._cluster_of(failure)
            self.occurrences.append(Occurrence(build, failure.row, cluster, failure.failure_class, failure.evidence,
                                               failure.flaky, failure.infra))

    def _cluster_of(self, failure: Failure) -> int:
        placed = self.placed.setdefault(failure.row, {})
        found = placed.get(failure.normalized)
        if found is not None:
            return found
        local = self.local.setdefault(failure.row, {})
        match = find_match(failure.normalized, local)
        if match is not None:
            cluster = local[match]
        else:
            cluster = local[failure.normalized] = self._global_cluster(failure)
        placed[failure.normalized] = cluster
        return cluster

    def _global_cluster(self, failure: Failure) -> int:
        key = failure.normalized
        found = self._index.get(key)
        if found is None:
            match = find_match(key, self.keys)
            if match is not None:
                found = self._index[match]
            else:
                found = self._index[key] = len(self.keys)
                self.keys.append(key)
                self.samples.append(failure.text)
        return found


class FailureClustering:
    """The Derivation of a job's Clustering (reports.derived)."""

    kind = "failures"

    def made(self, builds: Sequence[ParsedBuild]) -> Clustering:
        clustering = Clustering()
        for build in reversed(builds):
            clustering.add_build(build.id, build.evidence.failures)
        return clustering

    def extended(self, state: Clustering, width: int, new: Sequence[ParsedBuild], keep: int) -> Clustering | None:
        if keep < width:  # the oldest builds are gone: their failures may have started clusters others joined
            return None
        for build in reversed(new):
            state.add_build(build.id, build.evidence.failures)
        return state

    def dumps(self, state: Clustering) -> str:
        """Three lines of JSON: the clusters and each row's, the builds, the occurrences (the last two as they were
        read, with what is new after them)."""
        stored_builds, stored_occurrences = state._stored
        clusters = dumps({"keys": state.keys, "samples": state.samples, "local": state.local, "placed": state.placed})
        builds = appended(stored_builds, list(state.builds[stored_count(stored_builds):]))
        occurrences = appended(stored_occurrences, list(state.occurrences[stored_count(stored_occurrences):]))
        return "\n".join((clusters, builds, occurrences))

    def loads(self, text: str) -> Clustering:
        clusters_text, builds_text, occurrences_text = text.split("\n")  # JSON escapes every newline in it
        data = json.loads(clusters_text)
        keys = [str(key) for key in data["keys"]]
        local, placed = _text_maps(data["local"]), _text_maps(data["placed"])
        builds = [str(build) for build in json.loads(builds_text)]
        # a list of the wrong length: TypeError
        occurrences = list(map(Occurrence._make, json.loads(occurrences_text)))
        clusters = [o.cluster for o in occurrences] + [c for texts in (*local.values(), *placed.values())
                                                        for c in texts.values()]
        if len(data["samples"]) != len(keys) or not all(
                type(cluster) is int and 0 <= cluster < len(keys) for cluster in clusters):
            raise ValueError("stored clusters do not fit their keys")
        return Clustering(keys, [str(sample) for sample in data["samples"]], local, placed, occurrences, builds,
                          _index={key: i for i, key in enumerate(keys)},
                          _stored=(stored_text(builds, builds_text), stored_text(occurrences, occurrences_text)))


def _text_maps(data: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    return {str(row): {str(text): int(cluster) for text, cluster in texts.items()} for row, texts in data.items()}
