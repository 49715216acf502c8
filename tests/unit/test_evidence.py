"""Evidence for verdicts (no cluster): where a row ran held to the target OS, and a failure's class from what the
run observed; the counts the summary and finished.json give; the namespaces and suite setup of ginkgo's report."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from kubernetes import client

from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.facts import NodeFacts
from winsuite.results.merge import final_attempts
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.run.engines.ginkgo_report import attempts_of
from winsuite.run.engines.ginkgo_report import suite_setup_failure
from winsuite.run.evidence import Declared
from winsuite.run.evidence import Evidence
from winsuite.run.evidence import Stop
from winsuite.run.evidence import os_keys
from winsuite.run.observations import NodeChange
from winsuite.run.observations import Observer
from winsuite.run.observations import Outage
from winsuite.run.observations import PodSeen
from winsuite.run.observations import Renewal
from winsuite.run.summary import evidence_counts
from winsuite.run.summary import summarize
from winsuite_reports.conventions import FailureClass
from winsuite_reports.conventions import RowProperties

NOW = time.time()
NO_STOP = Stop()


def node(name: str, os_name: str, *, simulated: bool = False, build: str | None = None) -> NodeFacts:
    return NodeFacts(name=name, os=os_name, windows_build=build, kubelet_version="v1.36.3",
                     container_runtime="containerd://1.7.24", os_image="Windows Server 2022 Datacenter" if build else
                     "Debian GNU/Linux 12", kernel_version="10.0.20348.2527" if build else "6.1.0", simulated=simulated,
                     ready=True, unschedulable=False, taints=[], labels={}, allocatable={}, capacity={},
                     internal_ip=None, provider_id=None)


FACTS = ClusterFacts(server="https://127.0.0.1:6443", server_version="v1.36.3", nodes=[
    node("linux-0", "linux"), node("win-a", "windows", build="10.0.20348"),
    node("kwok-win", "windows", simulated=True, build="10.0.17763")], cluster_dns=True, metrics_api=False,
    runtime_classes=[], egress_allowed=False, warnings=[])


def observer(*pods: PodSeen, changes: tuple[NodeChange, ...] = (), outages: tuple[Outage, ...] = ()) -> Observer:
    """The run's record of the cluster as the threads would have filled it (none started here)."""
    seen = Observer(client.ApiClient())
    seen.pods = {(p.namespace, p.name): p for p in pods}
    seen.node_changes, seen.outages = list(changes), list(outages)
    return seen


def row(outcome: Outcome = Outcome.PASSED, *, message: str = "", namespaces: tuple[str, ...] = ("ns",),
        timed_out: bool = False) -> Attempt:
    return Attempt("[sig-node] a test", "t::a", outcome, duration=30.0, message=message, namespaces=namespaces,
                   started=NOW - 60, properties=RowProperties(timed_out=timed_out))


def judge(attempt: Attempt, *pods: PodSeen, target: str = "windows", stop: Stop = NO_STOP,
          changes: tuple[NodeChange, ...] = (), outages: tuple[Outage, ...] = ()) -> Attempt:
    return Evidence(observer(*pods, changes=changes, outages=outages), FACTS, target).judge(attempt, stop)


def test_a_row_names_the_real_nodes_its_pods_ran_on_never_a_simulated_one() -> None:
    judged = judge(row(), PodSeen("ns", "a", "win-a", started=True), PodSeen("ns", "b", "kwok-win", started=True),
                   PodSeen("ns", "c", "linux-0", started=False), PodSeen("other", "d", "linux-0", started=True))
    assert judged.outcome is Outcome.PASSED
    assert judged.properties.ran_on == ("win-a (windows, build 10.0.20348, Windows Server 2022 Datacenter, "
                                        "containerd://1.7.24)")
    assert os_keys(judged.properties.ran_on) == ["windows 10.0.20348"]


def test_a_pass_on_the_wrong_os_fails_naming_the_node() -> None:
    judged = judge(row(), PodSeen("ns", "a", "linux-0", started=True))
    assert judged.outcome is Outcome.FAILED
    assert judged.message.startswith("infrastructure: placement: the run targets windows, and none of the 1 pod(s)")
    assert "linux-0 (linux, containerd://1.7.24)" in judged.message
    assert judged.properties.failure_class == FailureClass.INFRASTRUCTURE


def test_a_test_with_a_linux_pod_beside_windows_ones_is_judged_by_its_windows_pods() -> None:
    judged = judge(row(), PodSeen("ns", "a", "linux-0", started=True), PodSeen("ns", "b", "win-a", started=True))
    assert judged.outcome is Outcome.PASSED and os_keys(judged.properties.ran_on) == ["linux", "windows 10.0.20348"]


def test_a_test_whose_pods_are_for_the_other_os_on_purpose_is_judged_by_that_os() -> None:
    """Linux pods kept off Windows nodes: on the Linux node they are where they belong; on a Windows one, not."""
    evidence = Evidence(observer(PodSeen("ns", "a", "linux-0", started=True)), FACTS, "windows",
                        {"[sig-node] a test": Declared(pods_os="linux")})
    assert evidence.judge(row()).outcome is Outcome.PASSED
    evidence = Evidence(observer(PodSeen("ns", "a", "win-a", started=True)), FACTS, "windows",
                        {"[sig-node] a test": Declared(pods_os="linux")})
    judged = evidence.judge(row())
    assert judged.outcome is Outcome.FAILED
    assert judged.message.startswith("infrastructure: placement: the test's pods are for linux, and none of the 1")


def test_pods_only_on_simulated_nodes_ran_nothing_and_fail_a_test_that_needs_containers() -> None:
    """kwok reports the pod Running: no container ran anywhere, so the pass does not stand."""
    judged = judge(row(), PodSeen("ns", "a", "kwok-win", started=True))
    assert judged.outcome is Outcome.FAILED and judged.properties.ran_on == ""
    assert judged.properties.failure_class == FailureClass.INFRASTRUCTURE
    assert judged.message == ("infrastructure: placement: the test needs a node that runs containers, and its 1 pod(s) "
                              "were bound only to simulated nodes, which run nothing: kwok-win")


def test_a_scheduling_test_may_pass_on_simulated_nodes() -> None:
    evidence = Evidence(observer(PodSeen("ns", "a", "kwok-win", started=True)), FACTS, "windows",
                        {"[sig-node] a test": Declared(needs_containers=False)})
    judged = evidence.judge(row())
    assert judged.outcome is Outcome.PASSED and judged.properties.ran_on == ""


@pytest.mark.parametrize(("attempt", "pods", "stop", "changes", "outages", "expected", "evidence"), [
    (row(Outcome.FAILED, message="timed out waiting for pod"),
     [PodSeen("ns", "a", "", pull_failures=["registry.invalid/pause:3.10: ErrImagePull: no such host"])],
     Stop(), (), (), FailureClass.INFRASTRUCTURE, "image pull failed: pod ns/a: registry.invalid/pause:3.10"),
    (row(Outcome.FAILED, message="exec failed"), [PodSeen("ns", "a", "win-a", started=True)], Stop(),
     (NodeChange("win-a", NOW - 40, "Unknown", "NodeStatusUnknown"),), (), FailureClass.INFRASTRUCTURE,
     "node win-a went Unknown (NodeStatusUnknown)"),
    (row(Outcome.FAILED, message="ApiServerLost"), [], Stop(), (), (Outage(NOW - 50, NOW - 20, "refused"),),
     FailureClass.INFRASTRUCTURE, "the API server did not answer from"),
    (row(Outcome.INTERRUPTED, message="interrupted: SIGTERM received"), [], Stop("SIGTERM received"), (), (),
     FailureClass.INFRASTRUCTURE, "the run was stopped: SIGTERM received"),
    (row(Outcome.FAILED, message="failed on setup: namespace"), [], Stop(), (), (), FailureClass.SETUP,
     "its setup failed"),
    (row(Outcome.FAILED, message="TestTimedOut", timed_out=True), [], Stop(), (), (), FailureClass.TIMEOUT,
     "the per-test timeout"),
    (row(Outcome.INTERRUPTED, message="interrupted"), [], Stop("run timeout of 60s reached", timed_out=True), (),
     (), FailureClass.TIMEOUT, "the run timeout cut it off"),
    (row(Outcome.FAILED, message="expected 2, got 1"), [PodSeen("ns", "a", "win-a", started=True)], Stop(), (),
     (Outage(NOW - 3600, NOW - 3000, "long before"),), FailureClass.TEST, "an assertion failed"),
], ids=["image-pull", "node-lost", "api-lost", "signal", "setup", "test-timeout", "run-timeout", "assertion"])
def test_a_failure_is_classed_by_what_was_observed(attempt: Attempt, pods: list[PodSeen], stop: Stop,
                                                   changes: tuple[NodeChange, ...], outages: tuple[Outage, ...],
                                                   expected: FailureClass, evidence: str) -> None:
    if expected is FailureClass.SETUP:
        attempt = Attempt(attempt.name, attempt.nodeid, attempt.outcome, message=attempt.message,
                          failed_during="setup")
    judged = judge(attempt, *pods, stop=stop, changes=changes, outages=outages)
    assert judged.properties.failure_class == expected
    assert evidence in judged.properties.failure_evidence
    assert judged.message.startswith(f"{expected}: ")


def test_a_node_lost_elsewhere_is_no_evidence_about_this_test() -> None:
    judged = judge(row(Outcome.FAILED, message="boom"), PodSeen("ns", "a", "win-a", started=True),
                   changes=(NodeChange("linux-0", NOW - 40, "False", "KubeletNotReady"),))
    assert judged.properties.failure_class == FailureClass.TEST


def test_a_lease_not_renewed_while_the_api_server_was_silent_is_the_api_servers_loss() -> None:
    """The kubelet of a node with the test's pod renewed its 40 s Lease last 50 s before the end: a lost node,
    unless the API server was not answering then (no kubelet can renew through it)."""
    pods = (PodSeen("ns", "a", "win-a", started=True),)
    lease_gap = observer(*pods)
    lease_gap.renewals = {"win-a": [Renewal(NOW - 90, NOW - 90, 40.0), Renewal(NOW - 80, NOW - 80, 40.0)]}
    attempt = row(Outcome.FAILED, message="context canceled")
    judged = Evidence(lease_gap, FACTS, "windows").judge(attempt)
    assert judged.properties.failure_evidence.startswith("node win-a's kubelet stopped renewing its Lease")
    lease_gap.outages = [Outage(NOW - 75, None, "timed out")]
    judged = Evidence(lease_gap, FACTS, "windows").judge(attempt)
    assert judged.properties.failure_class == FailureClass.INFRASTRUCTURE
    assert judged.properties.failure_evidence.startswith("the API server did not answer from"), judged.properties


def test_the_counts_say_classes_oses_and_flakes() -> None:
    rows = [judge(row(Outcome.FAILED, message="x"), PodSeen("ns", "a", "win-a", started=True)),
            Attempt("b", "n", Outcome.FAILED, message="first"), Attempt("b", "n", Outcome.PASSED, attempt=2),
            judge(row(), PodSeen("ns", "b", "linux-0", started=True), target="linux")]
    rows[3].name = "c"
    counts = evidence_counts(final_attempts(rows))
    assert counts.metadata() == {"failure-classes": {"test": 1}, "ran-on": {"linux": 1, "windows 10.0.20348": 1},
                                 "flaky": 1}
    text = summarize(rows, build_dir=Path("b"), result="FAILURE", interrupted="", dashboard=None)
    assert "Failures by class: 1 test" in text and "Ran on: linux: 1 test(s), windows 10.0.20348: 1 test(s)" in text


def test_ginkgo_reports_name_a_specs_namespaces_and_its_start(tmp_path: Path) -> None:
    report = {"ContainerHierarchyTexts": ["[sig-node] Pods"], "LeafNodeText": "should run", "LeafNodeType": "It",
              "State": "passed", "StartTime": "2026-11-25T22:00:00.123456789Z", "RunTime": 1_000_000_000,
              "SpecEvents": [{"SpecEventType": "By", "Message": "Building a namespace api object, basename pods"},
                             {"SpecEventType": "By", "Message": 'Destroying namespace "pods-8412" for this suite.'}],
              "CapturedGinkgoWriterOutput": 'STEP: Collecting events from namespace "pods-extra-1". @ 11/25/26'}
    (attempt,) = attempts_of(report, "upstream")
    assert attempt.namespaces == ("pods-8412", "pods-extra-1")
    assert attempt.started == pytest.approx(1795644000.123, abs=0.001)
    path = tmp_path / "report.json"
    path.write_text(json.dumps([{"SpecReports": [report]}]))
    assert suite_setup_failure(path) is None
    setup = {"LeafNodeType": "SynchronizedBeforeSuite", "State": "failed",
             "Failure": {"Message": "waiting for all nodes to be schedulable"}}
    path.write_text(json.dumps([{"SpecReports": [setup, report]}]))
    assert suite_setup_failure(path) == ("ginkgo's SynchronizedBeforeSuite failed: waiting for all nodes to be "
                                         "schedulable")
