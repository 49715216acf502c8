"""Every verdict with its evidence: where a row's pods ran (held to the run's target OS), and why a failed row failed.

Placement: a row whose pods ran (a container started) on nodes, none of them of the target OS, fails, naming the
nodes; a test that also runs pods of the other OS on purpose is judged by those of the target OS. Simulated nodes
run nothing: a pod there is never a placement. Failure classes, decided from what the run observed (observations.py),
in this order: infrastructure (an image that did not pull in its namespaces, a node its pods were on going NotReady
or away, or its kubelet no longer renewing the node's Lease while the API server answered, the API server not
answering while it ran, its pods on
the wrong OS, the run stopped by a signal), setup (pytest's setup phase or ginkgo's BeforeSuite failed), timeout
(the per-test or the run timeout cut it off), test (an assertion failed: nothing else was observed).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Iterable
from collections.abc import Mapping
from pathlib import Path

from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.facts import NodeFacts
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.run.observations import Observer
from winsuite.run.observations import PodSeen
from winsuite_reports.conventions import FailureClass

# A node is marked NotReady by the node controller some seconds after its kubelet stops (node-monitor-grace-period,
# 40 s by default): a change that soon after a test ended is still evidence about it.
NODE_GRACE_SECONDS = 60.0
# A kubelet renews its node's Lease every 10 s: two renewals missed before a test ended mean it had stopped.
STALE_HEARTBEAT_SECONDS = 25.0
SETUP_PHASES = ("setup", "BeforeSuite")
EVIDENCE_FILE = "evidence.txt"
_NODE_LABEL = re.compile(r"\((?P<os>[a-z]+)(?:, build (?P<build>[0-9.]+))?")


def node_label(node: NodeFacts) -> str:
    """A node as a row's `ran-on` names it: OS, Windows build and OS image, container runtime."""
    parts = [node.os]
    if node.windows_build:
        parts += [f"build {node.windows_build}", node.os_image or node.kernel_version]
    parts.append(node.container_runtime)
    return f"{node.name} ({', '.join(p for p in parts if p)})"


def os_keys(ran_on: str) -> list[str]:
    """Where a row ran, as the summary counts it: each OS, with its Windows build ("linux", "windows 10.0.20348"),
    read from the `ran-on` property node_label() wrote."""
    return list(dict.fromkeys(f"{m['os']} {m['build']}" if m["build"] else m["os"]
                              for m in _NODE_LABEL.finditer(ran_on)))


@dataclasses.dataclass(frozen=True)
class Stop:
    """Why the run stopped early, if it did: a signal, or the run timeout."""

    reason: str = ""
    timed_out: bool = False


class Evidence:
    def __init__(self, observer: Observer, facts: ClusterFacts, target_os: str,
                 pods_os: Mapping[str, str] | None = None) -> None:
        self.observer = observer
        self.nodes = {n.name: n for n in facts.nodes}
        self.target_os = target_os
        self.pods_os = dict(pods_os or {})  # test name -> the OS its pods are for, where not the target on purpose

    def judge(self, attempt: Attempt, stop: Stop = Stop()) -> Attempt:
        """The row with where it ran, failed when it ran on the wrong OS, and its failure class and evidence."""
        pods = self.observer.pods_in(attempt.namespaces)
        ran = self.ran_on(pods)
        attempt = dataclasses.replace(attempt, properties=dataclasses.replace(
            attempt.properties, ran_on=", ".join(node_label(n) for n in ran)))
        misplaced = self._misplaced(pods, ran, self.pods_os.get(attempt.name, self.target_os))
        if misplaced and attempt.outcome is Outcome.PASSED:
            attempt = dataclasses.replace(attempt, outcome=Outcome.FAILED, message=misplaced, details=misplaced)
        if attempt.outcome not in (Outcome.FAILED, Outcome.INTERRUPTED):
            return attempt
        failure_class, evidence = self._classify(attempt, pods, misplaced, stop)
        return dataclasses.replace(
            attempt, message=f"{failure_class}: {attempt.message}",
            properties=dataclasses.replace(attempt.properties, failure_class=failure_class,
                                           failure_evidence=evidence))

    def judge_all(self, rows: list[Attempt], stop: Stop, build_dir: Path) -> list[Attempt]:
        """Each row judged; a failed row's evidence written beside its diagnostics in `build_dir`."""
        judged = [self.judge(row, stop) for row in rows]
        for row in judged:
            if row.properties.failure_class and row.properties.diagnostics:
                _write_evidence(build_dir / row.properties.diagnostics, row)
        return judged

    def ran_on(self, pods: Iterable[PodSeen]) -> list[NodeFacts]:
        """The nodes where a container of the pods started (simulated nodes run nothing: never counted)."""
        names = dict.fromkeys(p.node for p in pods if p.started and p.node)
        return [node for name in names if (node := self.nodes.get(name)) is not None and not node.simulated]

    def _misplaced(self, pods: list[PodSeen], ran: list[NodeFacts], meant_for: str) -> str:
        if not ran or any(n.os == meant_for for n in ran):
            return ""
        count = sum(1 for p in pods if p.started)
        aim = (f"the run targets {meant_for}" if meant_for == self.target_os
               else f"the test's pods are for {meant_for}")
        return (f"placement: {aim}, and none of the {count} pod(s) that ran was on a {meant_for} node; they ran on "
                f"{', '.join(node_label(n) for n in ran)}")

    def _classify(self, attempt: Attempt, pods: list[PodSeen], misplaced: str,
                  stop: Stop) -> tuple[FailureClass, str]:
        start = attempt.started or time.time() - attempt.duration
        end = start + attempt.duration
        pulls = [f"pod {p.namespace}/{p.name}: {failure}" for p in pods for failure in p.pull_failures]
        if pulls:
            return FailureClass.INFRASTRUCTURE, f"image pull failed: {'; '.join(pulls[:3])}"
        on = {p.node for p in pods if p.node}
        lost = [c for c in self.observer.node_changes_between(start, end + NODE_GRACE_SECONDS)
                if c.node in on and c.state != "True"]
        if lost:
            change = lost[0]
            return FailureClass.INFRASTRUCTURE, (f"node {change.node} went {change.state} ({change.reason}) at "
                                                 f"{_clock(change.at)} while the test ran there")
        for node in sorted(on):
            renewed = self.observer.last_renewal(node, before=end)
            # A kubelet cannot renew through an API server that does not answer: that gap is the outage's.
            if (renewed is not None and end - renewed > STALE_HEARTBEAT_SECONDS
                    and not self.observer.outages_between(renewed, end)):
                return FailureClass.INFRASTRUCTURE, (f"node {node}'s kubelet stopped renewing its Lease at "
                                                     f"{_clock(renewed)}, {end - renewed:.0f}s before the test "
                                                     "ended there")
        outages = self.observer.outages_between(start, end)
        if outages:
            outage = outages[0]
            until = f"until {_clock(outage.end)}" if outage.end is not None else "to the end of the test"
            return FailureClass.INFRASTRUCTURE, (f"the API server did not answer from {_clock(outage.start)} {until} "
                                                 f"({outage.error})")
        if misplaced:
            return FailureClass.INFRASTRUCTURE, misplaced
        if attempt.outcome is Outcome.INTERRUPTED and stop.reason and not stop.timed_out:
            return FailureClass.INFRASTRUCTURE, f"the run was stopped: {stop.reason}"
        if attempt.failed_during in SETUP_PHASES:
            return FailureClass.SETUP, f"its {attempt.failed_during} failed before the test body ran"
        if attempt.properties.timed_out:
            return FailureClass.TIMEOUT, "the per-test timeout cut it off"
        if attempt.outcome is Outcome.INTERRUPTED and stop.timed_out:
            return FailureClass.TIMEOUT, f"the run timeout cut it off ({stop.reason})"
        return FailureClass.TEST, ("an assertion failed; no image pull failure, lost node, API server outage or "
                                   "timeout was observed while it ran")


def _write_evidence(directory: Path, attempt: Attempt) -> None:
    """Beside a failed row's diagnostics: where it ran, its class and what decided it."""
    properties = attempt.properties
    directory.mkdir(parents=True, exist_ok=True)
    (directory / EVIDENCE_FILE).write_text(
        f"test: {attempt.name} (attempt {attempt.attempt})\nnamespaces: {', '.join(attempt.namespaces) or 'none'}\n"
        f"ran on: {properties.ran_on or 'no node (no pod of it started a container)'}\n"
        f"failure class: {properties.failure_class}\nevidence: {properties.failure_evidence}\n", encoding="utf-8")


def _clock(moment: float) -> str:
    return time.strftime("%H:%M:%SZ", time.gmtime(moment))
