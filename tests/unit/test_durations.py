"""The record of test durations that orders a parallel phase longest first."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from winsuite.authoring.facts import ClusterFacts
from winsuite.inputs.cluster_spec import ClusterSpec
from winsuite.inputs.cluster_spec import ClusterType
from winsuite.inputs.images import RepoList
from winsuite.inputs.images import load_image_catalog
from winsuite.inputs.jobs import JobSpec
from winsuite.policy.run_config import RunConfig
from winsuite.policy.shards import ShardedTest
from winsuite.policy.shards import expected_durations
from winsuite.results import durations
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome

KEY = durations.RecordKey("embedded cluster winsuite", "winsuite-embedded")


def attempt(name: str, outcome: Outcome, seconds: float) -> Attempt:
    return Attempt(name, f"test_x.py::{name}", outcome, duration=seconds)


def longest_first(names: list[str], known: dict[str, float]) -> list[int]:
    """The order a parallel phase gives its tests (plugin.collection): by expected duration, longest first."""
    expected = expected_durations([ShardedTest(name) for name in names], known)
    return sorted(range(len(names)), key=lambda index: -expected[names[index]])


def test_the_longest_known_go_first_and_an_unknown_one_counts_as_the_median() -> None:
    known = {"a": 1.0, "b": 11.0, "c": 3.0}
    assert longest_first(["a", "new", "b", "c"], known) == [2, 1, 3, 0]  # b 11, new ~3 (median), c 3, a 1


def test_with_no_record_the_order_is_kept() -> None:
    assert longest_first(["x", "y", "z"], {}) == [0, 1, 2]


def test_a_run_records_what_ran_to_a_verdict_and_keeps_the_rest(tmp_path: Path) -> None:
    durations.record([attempt("a", Outcome.PASSED, 2.5), attempt("b", Outcome.SKIPPED, 0.0)], KEY, tmp_path)
    durations.record([attempt("c", Outcome.FAILED, 7.25)], KEY, tmp_path)
    assert durations.load_record(KEY, tmp_path) == {"a": 2.5, "c": 7.25}


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"a": "slow", "b": -1, "c": true, "d": 2}', ""])
def test_a_malformed_record_is_ignored(tmp_path: Path, content: str) -> None:
    path = tmp_path / "durations.json"
    path.write_text(content)
    assert durations.load(path) == ({"d": 2.0} if '"d"' in content else {})


def test_two_clusters_keep_their_own_durations_of_a_job(tmp_path: Path) -> None:
    """A test that timed out on one cluster reorders (and reshards) that cluster's runs only."""
    other = durations.RecordKey("https://10.0.0.9:6443 (kube-system 5f0c…)", KEY.job)
    durations.record([attempt("a", Outcome.PASSED, 2.0), attempt("b", Outcome.PASSED, 1.0)], KEY, tmp_path)
    durations.record([attempt("a", Outcome.FAILED, 90.0)], other, tmp_path)
    assert durations.load_record(KEY, tmp_path) == {"a": 2.0, "b": 1.0}
    assert durations.load_record(other, tmp_path) == {"a": 90.0}
    assert durations.load_record(durations.RecordKey(KEY.cluster, "another-job"), tmp_path) == {}
    assert durations.load_record(None, tmp_path) == {}


def test_a_record_of_the_old_format_reads_as_before_and_is_kept_on_a_new_run(tmp_path: Path) -> None:
    (tmp_path / KEY.file_name).write_text('{"a": 3.5, "b": 1}')  # a bare mapping, as records and snapshots were
    assert durations.load_record(KEY, tmp_path) == {"a": 3.5, "b": 1.0}
    durations.record([attempt("b", Outcome.PASSED, 2.0)], KEY, tmp_path)
    assert durations.load_record(KEY, tmp_path) == {"a": 3.5, "b": 2.0}
    assert json.loads((tmp_path / KEY.file_name).read_text())["cluster"] == KEY.cluster


def test_a_run_without_a_key_records_nothing(tmp_path: Path) -> None:
    durations.record([attempt("a", Outcome.PASSED, 1.0)], None, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_the_records_written_longest_ago_go_past_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(durations, "MAX_RECORDS", 2)
    keys = [durations.RecordKey(f"kind cluster test-{n}", "j") for n in range(3)]
    for age, key in enumerate(keys):
        durations.record([attempt("a", Outcome.PASSED, 1.0)], key, tmp_path)
        os.utime(tmp_path / key.file_name, (1_000_000 + age, 1_000_000 + age))
    durations.record([attempt("a", Outcome.PASSED, 1.0)], keys[2], tmp_path)
    assert [durations.load_record(key, tmp_path) != {} for key in keys] == [False, True, True]


def test_a_snapshot_is_what_the_phases_read_whatever_is_written_after(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WINSUITE_CACHE_DIR", str(tmp_path / "cache"))
    durations.record([attempt("a", Outcome.PASSED, 1.0)], KEY)
    copy = durations.snapshot(tmp_path / "snapshot.json", KEY)
    durations.record([attempt("a", Outcome.PASSED, 9.0)], KEY)
    assert json.loads(copy.read_text()) == {"a": 1.0}
    assert durations.load_record(KEY) == {"a": 9.0}


@pytest.mark.parametrize(("cluster", "facts", "expected"), [
    (ClusterSpec(ClusterType.EMBEDDED, "dev"), None, "embedded cluster dev"),
    (ClusterSpec(ClusterType.KIND), None, "kind cluster winsuite"),
    (ClusterSpec(ClusterType.KUBECONFIG, kubeconfig="/k"), None, None),
    (ClusterSpec(ClusterType.KUBECONFIG, kubeconfig="/k"), ("https://10.0.0.1:6443", "uid-1"),
     "https://10.0.0.1:6443 (kube-system uid-1)"),
    (ClusterSpec(ClusterType.IN_CLUSTER), ("https://10.96.0.1:443", ""), "https://10.96.0.1:443"),
], ids=["embedded", "kind", "undiscovered", "discovered", "uid unreadable"])
def test_a_runs_record_is_its_job_on_its_cluster(cluster: ClusterSpec, facts: tuple[str, str] | None,
                                                 expected: str | None) -> None:
    """A made cluster by its type and name (remade alike), another by its server and kube-system's UID."""
    run = RunConfig(JobSpec("j", cluster=cluster), (), load_image_catalog(), RepoList("", {}), "r")
    if facts is not None:
        run = run.with_facts(ClusterFacts(server=facts[0], server_version="v1.36.3", nodes=[], cluster_dns=True,
                                          metrics_api=True, runtime_classes=[], egress_allowed=True, warnings=[],
                                          cluster_uid=facts[1]))
    key = durations.key_of(run)
    assert (key.cluster if key is not None else None) == expected
    assert key is None or key.job == "j"


def test_a_jobs_stored_builds_give_durations_the_newest_winning(tmp_path: Path) -> None:
    from winsuite.results import junit
    from winsuite.results.durations import of_job
    from winsuite.results.model import Attempt
    from winsuite.results.model import Outcome

    for build, seconds in (("20260101000000", 5.0), ("20260102000000", 7.0)):
        junit.write(tmp_path / build / "artifacts" / "junit_01.xml",
                    [Attempt("a", "", Outcome.PASSED, duration=seconds), Attempt("s", "", Outcome.SKIPPED,
                                                                                 duration=0.1)])
    (tmp_path / "20260103000000" / "artifacts").mkdir(parents=True)
    (tmp_path / "20260103000000" / "artifacts" / "junit_01.xml").write_text("<not xml")
    assert of_job(tmp_path) == {"a": 7.0}
