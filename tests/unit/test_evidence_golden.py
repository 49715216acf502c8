"""The class chain as data: each tests/unit/golden/evidence/<case>/input.yaml is what a run observed (discovered nodes,
tests' declarations, the watches' pod, node and Lease events and the API guard's probes, each at a moment of the run's
clock) and its rows; expected.txt is every row as judged (outcome, message, ran-on, class, evidence, evidence.txt),
discovery's warnings and what the watches did not see. Fields: the README.md beside the cases.
`pytest tests/unit/test_evidence_golden.py --update-golden` rewrites expected.txt."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.facts import NodeFacts
from winsuite.authoring.naming import Provokes
from winsuite.authoring.naming import Spec
from winsuite.cluster.discovery import _warnings
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.run.evidence import EVIDENCE_FILE
from winsuite.run.evidence import Evidence
from winsuite.run.evidence import Stop
from winsuite.run.evidence import declarations
from winsuite.run.observations import Observer
from winsuite_reports.conventions import RowProperties

GOLDEN = Path(__file__).parent / "golden" / "evidence"
CASES = sorted(path for path in GOLDEN.iterdir() if (path / "input.yaml").is_file())
T0 = 1_800_000_000.0  # the run's clock at `at: 0` (08:00:00Z)
KWOK_TAINT = "kwok.x-k8s.io/node=fake:NoSchedule"


def node_facts(spec: dict[str, Any]) -> NodeFacts:
    simulated = bool(spec.get("simulated", False))
    return NodeFacts(name=spec["name"], os=spec.get("os", "linux"), windows_build=spec.get("build"),
                     kubelet_version="v1.36.3", container_runtime="containerd://1.7.24", os_image="",
                     kernel_version="", simulated=simulated, ready=True, unschedulable=False,
                     taints=list(spec.get("taints", [KWOK_TAINT] if simulated else [])), labels={}, allocatable={},
                     capacity={}, internal_ip=None, provider_id=None)


def spec_of(name: str, declared: dict[str, Any]) -> Spec:
    return Spec(segments=(name,), needs=tuple(Capability[c] for c in declared.get("needs", [])),
                pods_os=declared.get("podsOS", ""), provokes=tuple(Provokes[p] for p in declared.get("provokes", [])))


def moment(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(T0 + seconds, tz=datetime.UTC)


def pod(spec: dict[str, Any]) -> client.V1Pod:
    """A pod as the watch delivers it: bound to `node`, its container running, or waiting with a reason."""
    state = client.V1ContainerState()
    if spec.get("running"):
        state.running = client.V1ContainerStateRunning(started_at=moment(0))
    if spec.get("waiting"):
        state.waiting = client.V1ContainerStateWaiting(reason=spec["waiting"], message=spec.get("message", ""))
    container = client.V1ContainerStatus(name="c", image=spec.get("image", "agnhost"), image_id="", ready=False,
                                         restart_count=0, state=state)
    return client.V1Pod(metadata=client.V1ObjectMeta(namespace=spec["namespace"], name=spec["name"]),
                        spec=client.V1PodSpec(node_name=spec.get("node"), containers=[]),
                        status=client.V1PodStatus(container_statuses=[container]))


def node(spec: dict[str, Any]) -> client.V1Node:
    annotations = {"kwok.x-k8s.io/node": "fake"} if spec.get("simulated") else None
    ready = client.V1NodeCondition(type="Ready", status=spec.get("ready", "True"), reason=spec.get("reason", ""))
    return client.V1Node(metadata=client.V1ObjectMeta(name=spec["name"], annotations=annotations),
                         status=client.V1NodeStatus(conditions=[ready]))


def lease(spec: dict[str, Any]) -> client.V1Lease:
    """`renewTime` is written by the holder's clock: seconds from T0 on that clock."""
    return client.V1Lease(metadata=client.V1ObjectMeta(name=spec["node"]), spec=client.V1LeaseSpec(
        renew_time=moment(spec["renewTime"]), lease_duration_seconds=spec.get("durationSeconds", 40)))


def observe(events: list[dict[str, Any]]) -> Observer:
    """Feed the events to an observer whose clock reads each event's moment, as its threads would."""
    now = [T0]
    observer = Observer(client.ApiClient(), clock=lambda: now[0])
    for event in events:
        now[0] = T0 + event["at"]
        kind = "DELETED" if event.get("deleted") else "MODIFIED"
        if "pod" in event:
            observer.on_pod(kind, pod(event["pod"]))
        elif "node" in event:
            observer.on_node(kind, node(event["node"]))
        elif "lease" in event:
            observer.on_lease(kind, lease(event["lease"]))
        elif "guard" in event:
            observer.probed(event["guard"])
        elif "watchError" in event:
            observer.lost(event["watchError"]["watch"], event["watchError"]["error"])
        elif "watchListed" in event:
            observer.saw(event["watchListed"])
        else:
            raise AssertionError(f"unknown event {event}")
    return observer


def attempt(spec: dict[str, Any], number: int) -> Attempt:
    return Attempt(spec["name"], f"t::{number}", Outcome(spec.get("outcome", "passed")), duration=spec["duration"],
                   message=spec.get("message", ""), namespaces=tuple(spec.get("namespaces", [])),
                   started=T0 + spec["start"], failed_during=spec.get("failedDuring", ""),
                   properties=RowProperties(timed_out=spec.get("timedOut", False), diagnostics=f"row-{number}"))


def render(case: Path, build_dir: Path) -> str:
    spec = yaml.safe_load((case / "input.yaml").read_text())
    facts = ClusterFacts(server="https://127.0.0.1:6443", server_version="v1.36.3",
                         nodes=[node_facts(n) for n in spec["nodes"]], cluster_dns=True, metrics_api=False,
                         runtime_classes=[], egress_allowed=False, warnings=[])
    declared = declarations(spec_of(name, d) for name, d in (spec.get("tests") or {}).items())
    evidence = Evidence(observe(spec.get("events", [])), facts, spec.get("target", "linux"), declared)
    stop = Stop(**spec.get("stop", {}))
    rows = [attempt(row, number) for number, row in enumerate(spec["rows"])]
    lines = [f"warning: {w}" for w in _warnings(facts.server_version, facts.nodes, [])]
    lines += [f"unseen: {u}" for u in evidence.unseen()]
    for row in evidence.judge_all(rows, stop, build_dir):
        properties = row.properties
        lines += [row.name, f"  outcome: {row.outcome.value}", f"  message: {row.message}",
                  f"  ran-on: {properties.ran_on}", f"  class: {properties.failure_class}",
                  f"  evidence: {properties.failure_evidence}"]
        written = build_dir / properties.diagnostics / EVIDENCE_FILE
        if written.exists():
            lines += ["  evidence.txt:", *(f"    {line}" for line in written.read_text().splitlines())]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_class_chain_matches_golden(case: Path, tmp_path: Path, pytestconfig: pytest.Config) -> None:
    actual = render(case, tmp_path)
    expected = case / "expected.txt"
    if pytestconfig.getoption("--update-golden"):
        expected.write_text(actual)
        return
    assert expected.is_file(), f"{expected} is missing; create it with `pytest {__file__} --update-golden`"
    assert actual == expected.read_text(), f"{case.name}: output differs (`--update-golden` rewrites expected.txt)"
