"""No pass without a real placement (no cluster): pods kept off simulated nodes by name, tainted or not, natively and
through the upstream placement policy; discovery's warning of untainted simulated nodes; the catalog's declarations
of what its tests provoke; the observer's blind windows and Lease clocks; and the class chain's contrasts the golden
cases (test_evidence_golden.py) do not spell out."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from kubernetes import client
from kubernetes import watch

from tests.unit.test_evidence import FACTS
from tests.unit.test_evidence import node
from tests.unit.test_evidence import observer
from tests.unit.test_evidence import row
from winsuite.authoring.naming import Provokes
from winsuite.authoring.naming import Spec
from winsuite.authoring.target import Target
from winsuite.authoring.targeting import Placement
from winsuite.authoring.targeting import place_pod
from winsuite.cluster.discovery import _warnings
from winsuite.policy.catalog import collect
from winsuite.results.model import Outcome
from winsuite.run.engines.placement_policy import patch_expression
from winsuite.run.evidence import Declared
from winsuite.run.evidence import Evidence
from winsuite.run.evidence import Stop
from winsuite.run.evidence import declarations
from winsuite.run.evidence import placement_unknown
from winsuite.run.observations import PODS
from winsuite.run.observations import NodeChange
from winsuite.run.observations import Observer
from winsuite.run.observations import PodSeen
from winsuite.run.observations import Renewal
from winsuite_reports.conventions import FailureClass

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
NOT_ON = [{"key": "metadata.name", "operator": "NotIn", "values": [name]} for name in ("kwok-a", "kwok-b")]
NEVER = "should not pull an image the node lacks if the policy is Never"


def required_terms(pod: dict[str, object]) -> list[dict[str, object]]:
    spec = pod["spec"]
    assert isinstance(spec, dict)
    return list(spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"])


# -- placement ----------------------------------------------------------------------------------------------------
def test_pods_are_kept_off_each_simulated_node_by_name() -> None:
    """One requirement per node: the API allows a node field requirement a single value."""
    placed = place_pod(POD, Placement("linux").avoiding(["kwok-b", "kwok-a", "kwok-b"]))
    assert required_terms(placed) == [{"matchFields": NOT_ON}]
    assert place_pod(placed, Placement("linux").avoiding(["kwok-a", "kwok-b"])) == placed  # placed twice: once


def test_the_exclusion_is_anded_into_every_term_a_pod_has_and_keeps_its_other_affinity() -> None:
    pod = dict(POD, spec={"containers": [], "affinity": {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []},
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["linux-0"]}]}]}}}})
    placed = place_pod(pod, Placement("linux").avoiding(["kwok-a", "kwok-b"]))
    assert required_terms(placed) == [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}], "matchFields": NOT_ON},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["linux-0"]}, *NOT_ON]}]
    assert "podAntiAffinity" in placed["spec"]["affinity"]


def test_scheduling_tests_may_use_simulated_nodes_and_a_cluster_without_them_adds_nothing() -> None:
    assert "affinity" not in place_pod(POD, Placement("linux").avoiding(["kwok-a"]).for_scheduling_only())["spec"]
    assert "affinity" not in place_pod(POD, Placement("linux"))["spec"]


def test_a_tests_target_keeps_off_the_clusters_simulated_nodes_whatever_placement_it_is_given() -> None:
    target = Target(FACTS, Spec(("a",)), Placement("windows"), lambda image_id, **_: image_id)
    assert target.placement.simulated_nodes == ("kwok-win",)
    assert required_terms(target.place(POD)) == [
        {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["kwok-win"]}]}]
    assert target.placed(Placement("linux")).placement.simulated_nodes == ("kwok-win",)
    assert "affinity" not in target.scheduling_only().place(POD)["spec"]


def test_the_upstream_placement_policy_adds_the_exclusion_only_where_there_are_simulated_nodes() -> None:
    """The expression itself runs on the embedded cluster (test_untainted_simulated_nodes.py)."""
    assert "NotIn" not in patch_expression(Placement("linux"))
    expression = patch_expression(Placement("linux").avoiding(["kwok-a", "kwok-b"]))
    assert '["kwok-a", "kwok-b"].map(n,' in expression and '"NotIn"' in expression
    assert "nodeSelectorTerms[3]" in expression and "nodeSelectorTerms[4]" not in expression


def test_discovery_warns_in_one_line_of_simulated_nodes_without_kwoks_taint() -> None:
    tainted = dataclasses.replace(node("kwok-0", "linux", simulated=True),
                                  taints=["kwok.x-k8s.io/node=fake:NoSchedule"])
    untainted = [node(f"kwok-{i}", "linux", simulated=True) for i in range(1, 8)]
    (warning,) = _warnings("v1.36.3", [node("linux-0", "linux"), tainted, *untainted], [])
    assert warning.startswith("7 simulated node(s) without kwok's taint kwok.x-k8s.io/node (kwok-1, kwok-2, kwok-3, "
                              "kwok-4, kwok-5 and 2 more): ")
    assert _warnings("v1.36.3", [node("linux-0", "linux"), tainted], []) == []


# -- declarations ---------------------------------------------------------------------------------------------------
def test_the_catalogs_tests_declare_the_pull_failures_and_restarts_they_provoke() -> None:
    declared = declarations(entry.spec for entry in collect())
    provoking = {name: d.provokes for name, d in declared.items() if d.provokes}
    expected = {NEVER: {Provokes.PULL_FAILURES},
                "GracefulNodeShutdown [Serial] [Disruptive] [Slow] should be able to gracefully shutdown pods with "
                "various grace periods": {Provokes.NODE_DISRUPTION},
                "RebootHost containers [Serial] [Disruptive] [Slow] should run as a reboot process on the host/node":
                    {Provokes.NODE_DISRUPTION}}
    assert len(provoking) == len(expected)
    for ending, provokes in expected.items():
        assert [p for name, p in provoking.items() if name.endswith(ending)] == [provokes], ending
    never = next(d for name, d in declared.items() if name.endswith(NEVER))
    assert never.needs_containers


# -- the observer ----------------------------------------------------------------------------------------------------
def test_a_watch_that_never_listed_is_blind_from_the_start_and_one_that_listed_from_its_error() -> None:
    now = [100.0]
    seen = Observer(client.ApiClient(), clock=lambda: now[0])
    now[0] = 105.0
    seen.lost(PODS, "403 Forbidden: pods is forbidden")
    seen.lost(PODS, "403 Forbidden: pods is forbidden")  # the same window, its first error kept
    now[0] = 110.0
    seen.saw(PODS)
    now[0] = 150.0
    seen.lost(PODS, "WatchFailed: watch failed: 500")
    assert [(w.start, w.end, w.error) for w in seen.blind[PODS]] == [
        (100.0, 110.0, "403 Forbidden: pods is forbidden"), (150.0, None, "WatchFailed: watch failed: 500")]
    assert seen.blind_between(PODS, 111, 149) == []


def test_the_lease_watch_delivers_leases_not_dicts() -> None:
    """The client's watch types its events by the listing function's return annotation: a wrapper without one gave
    dicts, and every Lease event broke the watch."""
    assert watch.Watch().get_return_type(observer()._node_leases) == "V1Lease"


def test_a_renewal_is_placed_on_the_runs_clock_by_its_quickest_delivery() -> None:
    """The holder's clock is 1000 s off; one renewal arrives 30 s late: each is placed when it happened."""
    seen = observer()
    seen.renewals = {"win-a": [Renewal(-1000 + t, t + (30 if t == 40 else 0.5), 40.0) for t in (0, 10, 20, 30, 40)]}
    last = seen.last_renewal("win-a", before=45)
    assert last is not None and last.at == 40.5 and last.duration == 40.0
    assert seen.last_renewal("win-a", before=0) is None


# -- the class chain --------------------------------------------------------------------------------------------------
def test_a_lease_lasting_200s_renewed_every_50s_is_no_stopped_kubelet_but_one_past_its_duration_is() -> None:
    failed = row(Outcome.FAILED, message="boom")
    assert failed.started is not None
    end = failed.started + failed.duration
    seen = observer(PodSeen("ns", "a", "win-a", started=True))
    seen.renewals = {"win-a": [Renewal(end - 190 + 50 * i, end - 190 + 50 * i, 200.0) for i in range(4)]}
    judged = Evidence(seen, FACTS, "windows").judge(failed)
    assert judged.properties.failure_class == FailureClass.TEST
    seen.renewals = {"win-a": [Renewal(end - 201, end - 201, 200.0)]}
    judged = Evidence(seen, FACTS, "windows").judge(failed)
    assert judged.properties.failure_evidence.startswith("node win-a's kubelet stopped renewing its Lease: "), judged


def test_a_node_lost_in_the_grace_window_is_evidence_unless_a_later_test_disrupted_it_on_purpose(
        tmp_path: Path) -> None:
    first = row(Outcome.FAILED, message="boom")
    assert first.started is not None
    lost = NodeChange("win-a", first.started + first.duration + 20, "Unknown", "NodeStatusUnknown")
    pods = (PodSeen("ns", "a", "win-a", started=True),)
    judged = Evidence(observer(*pods, changes=(lost,)), FACTS, "windows").judge(first)
    assert judged.properties.failure_class == FailureClass.INFRASTRUCTURE
    reboot = dataclasses.replace(first, name="reboot", outcome=Outcome.PASSED, namespaces=("other",),
                                 started=first.started + first.duration + 5)
    evidence = Evidence(observer(*pods, changes=(lost,)), FACTS, "windows",
                        {"reboot": Declared(provokes=frozenset({Provokes.NODE_DISRUPTION}))})
    judged, _ = evidence.judge_all([first, reboot], stop=Stop(), build_dir=tmp_path)
    assert judged.properties.failure_class == FailureClass.TEST, judged.properties


def test_a_pass_whose_pods_the_watch_could_not_see_says_its_placement_is_unknown() -> None:
    seen = observer()  # made now: its pod watch never listed, so it is blind from its start
    seen.started = 0.0
    seen.lost(PODS, '403 Forbidden: pods is forbidden: User "x" cannot list resource "pods"')
    judged = Evidence(seen, FACTS, "windows").judge(row())
    assert judged.outcome is Outcome.PASSED and judged.message.startswith("placement unknown: the pods watch did not "
                                                                          "see from ")
    assert placement_unknown(judged).endswith('(403 Forbidden: pods is forbidden: User "x" cannot list resource '
                                              '"pods")')
    seen.pods = {("ns", "a"): PodSeen("ns", "a", "win-a", started=True)}  # seen on a real node after all: known
    assert placement_unknown(Evidence(seen, FACTS, "windows").judge(row())) == ""
