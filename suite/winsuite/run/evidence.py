"""Every verdict with its evidence: where a row's pods ran (held to the run's target OS), and why a failed row failed.

Placement: a row whose pods ran (a container started) on nodes, none of them of the target OS, fails, naming the
nodes; a test that also runs pods of the other OS on purpose is judged by those of the target OS. Simulated nodes
run nothing: a pod there is never a placement, and a test that needs a node running containers whose pods were bound
only to simulated nodes fails, naming them. Where the pod watch did not see while a row ran, its placement is unknown
and the row says so (`placement unknown: …`) instead of passing for "ran nowhere".

Failure classes, decided from what the run observed (observations.py), in this order: infrastructure (an image that
did not pull in its namespaces, a node its pods were on going NotReady or away, or its kubelet no longer renewing the
node's Lease for longer than the Lease's own duration while the API server answered, the API server not answering
while it ran, its pods on the wrong OS or only on simulated nodes, the run stopped by a signal), setup (pytest's setup
phase or ginkgo's BeforeSuite failed), timeout (the per-test or the run timeout cut it off), test (an assertion
failed: nothing else was observed). What a test declares it provokes (authoring/naming.py `Provokes`: pull failures,
node disruption) is no evidence against it, and a later test's deliberate disruption none against an earlier one.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Iterable
from collections.abc import Mapping
from pathlib import Path

from winsuite.authoring.capabilities import Capability
from winsuite.authoring.facts import NEEDS_REAL_NODE
from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.facts import NodeFacts
from winsuite.authoring.naming import Provokes
from winsuite.authoring.naming import Spec
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.run.observations import LEASES
from winsuite.run.observations import NODES
from winsuite.run.observations import PODS
from winsuite.run.observations import Observer
from winsuite.run.observations import Outage
from winsuite.run.observations import PodSeen
from winsuite_reports.conventions import FailureClass

# A node is marked NotReady by the node controller some seconds after its kubelet stops (node-monitor-grace-period,
# 40 s by default): a change that soon after a test ended is still evidence about it.
NODE_GRACE_SECONDS = 60.0
SETUP_PHASES = ("setup", "BeforeSuite")
EVIDENCE_FILE = "evidence.txt"
PLACEMENT_UNKNOWN = "placement unknown"
# What a test can need that only a node running containers gives.
RUNS_CONTAINERS = NEEDS_REAL_NODE | {
    Capability.WINDOWS_KERNEL, Capability.LINUX_AND_WINDOWS_CONTAINERS, Capability.HOSTPROCESS, Capability.HYPERV,
    Capability.ACTIVE_DIRECTORY, Capability.GPU}
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


def placement_unknown(attempt: Attempt) -> str:
    """Why the row's placement is unknown (a watch that did not see while it ran), or "" when it is known."""
    evidence = attempt.properties.failure_evidence
    return evidence[evidence.index(PLACEMENT_UNKNOWN):] if PLACEMENT_UNKNOWN in evidence else ""


@dataclasses.dataclass(frozen=True)
class Stop:
    """Why the run stopped early, if it did: a signal, or the run timeout."""

    reason: str = ""
    timed_out: bool = False


@dataclasses.dataclass(frozen=True)
class Declared:
    """What a test says of itself that its evidence depends on. A test winsuite has no spec of (an upstream spec
    that is no native test's twin) runs containers and provokes nothing."""

    pods_os: str = ""  # the OS its pods are for when that is on purpose not the run's target
    needs_containers: bool = True
    provokes: frozenset[Provokes] = frozenset()


def declarations(specs: Iterable[Spec]) -> dict[str, Declared]:
    """Each test's declarations by its full name (an upstream twin's row has the same name, and the same test)."""
    return {spec.full_name: Declared(spec.pods_os, any(c in RUNS_CONTAINERS for c in spec.needs),
                                     frozenset(spec.provokes)) for spec in specs}


@dataclasses.dataclass(frozen=True)
class _Span:
    """A row's time on the run's clock, and what it was judged with."""

    start: float
    end: float
    declared: Declared


class Evidence:
    def __init__(self, observer: Observer, facts: ClusterFacts, target_os: str,
                 declared: Mapping[str, Declared] | None = None) -> None:
        self.observer = observer
        self.nodes = {n.name: n for n in facts.nodes}
        self.target_os = target_os
        self.declared = dict(declared or {})
        self.disruptions: list[tuple[float, float]] = []  # when tests that disrupt nodes on purpose ran

    def judge(self, attempt: Attempt, stop: Stop = Stop()) -> Attempt:
        """The row with where it ran, failed when it ran on the wrong OS or only on simulated nodes, and its failure
        class and evidence; `placement unknown` where the pod watch did not see it."""
        span = self._span(attempt)
        pods = self.observer.pods_in(attempt.namespaces)
        ran = self.ran_on(pods)
        attempt = dataclasses.replace(attempt, properties=dataclasses.replace(
            attempt.properties, ran_on=", ".join(node_label(n) for n in ran)))
        misplaced = (self._misplaced(pods, ran, span.declared.pods_os or self.target_os)
                     or self._simulated_only(pods, span.declared))
        if misplaced and attempt.outcome is Outcome.PASSED:
            attempt = dataclasses.replace(attempt, outcome=Outcome.FAILED, message=misplaced, details=misplaced)
        unknown = self._placement_unknown(pods, span)
        if attempt.outcome not in (Outcome.FAILED, Outcome.INTERRUPTED):
            if not unknown or attempt.outcome is not Outcome.PASSED:
                return attempt
            return dataclasses.replace(attempt, message=unknown, properties=dataclasses.replace(
                attempt.properties, failure_evidence=unknown))
        failure_class, evidence = self._classify(attempt, pods, misplaced, stop, span, pods_unseen=bool(unknown))
        unseen = [*self._unseen(span), *([unknown] if unknown else [])]
        return dataclasses.replace(
            attempt, message=f"{failure_class}: {attempt.message}",
            properties=dataclasses.replace(attempt.properties, failure_class=failure_class,
                                           failure_evidence="; ".join([evidence, *unseen])))

    def judge_all(self, rows: list[Attempt], stop: Stop, build_dir: Path) -> list[Attempt]:
        """Each row judged (knowing when the rows that disrupt nodes on purpose ran); a failed row's evidence
        written beside its diagnostics in `build_dir`."""
        for row in rows:
            span = self._span(row)
            if Provokes.NODE_DISRUPTION in span.declared.provokes and row.outcome is not Outcome.SKIPPED:
                self.disruptions.append((span.start, span.end))
        judged = [self.judge(row, stop) for row in rows]
        for row in judged:
            if row.properties.failure_class and row.properties.diagnostics:
                self.write_evidence(build_dir / row.properties.diagnostics, row)
        return judged

    def ran_on(self, pods: Iterable[PodSeen]) -> list[NodeFacts]:
        """The nodes where a container of the pods started (simulated nodes run nothing: never counted)."""
        names = dict.fromkeys(p.node for p in pods if p.started and p.node)
        return [node for name in names if (node := self.nodes.get(name)) is not None and not self._simulated(name)]

    def unseen(self) -> list[str]:
        """What the run's watches did not see, for the summary: one line per window of each watch."""
        return [f"the {watch} watch did not see {_window(window, 'to the end of the run')} ({window.error})"
                for watch in (PODS, NODES, LEASES) for window in self.observer.blind_between(watch, 0, float("inf"))]

    def write_evidence(self, directory: Path, attempt: Attempt) -> None:
        """Beside a failed row's diagnostics: where it ran (and where its pods were bound, when that says more),
        its class and what decided it: the same words as the row's."""
        properties = attempt.properties
        pods = self.observer.pods_in(attempt.namespaces)
        bound, ran = self._bound(pods), {n.name for n in self.ran_on(pods)}
        bound_line = (f"pods bound to: {', '.join(self._bound_label(n) for n in bound)}\n"
                      if set(bound) - ran else "")
        directory.mkdir(parents=True, exist_ok=True)
        (directory / EVIDENCE_FILE).write_text(
            f"test: {attempt.name} (attempt {attempt.attempt})\nnamespaces: {', '.join(attempt.namespaces) or 'none'}\n"
            f"ran on: {properties.ran_on or 'no real node (no pod of it started a container on one)'}\n{bound_line}"
            f"failure class: {properties.failure_class}\nevidence: {properties.failure_evidence}\n", encoding="utf-8")

    # -- placement -----------------------------------------------------------------------------------------------
    def _simulated(self, node: str) -> bool:
        known = self.nodes.get(node)
        return (known is not None and known.simulated) or self.observer.is_simulated(node)

    def _bound(self, pods: Iterable[PodSeen]) -> list[str]:
        return list(dict.fromkeys(p.node for p in pods if p.node))

    def _bound_label(self, node: str) -> str:
        return f"{node} (simulated)" if self._simulated(node) else node

    def _misplaced(self, pods: list[PodSeen], ran: list[NodeFacts], meant_for: str) -> str:
        if not ran or any(n.os == meant_for for n in ran):
            return ""
        count = sum(1 for p in pods if p.started)
        aim = (f"the run targets {meant_for}" if meant_for == self.target_os
               else f"the test's pods are for {meant_for}")
        return (f"placement: {aim}, and none of the {count} pod(s) that ran was on a {meant_for} node; they ran on "
                f"{', '.join(node_label(n) for n in ran)}")

    def _simulated_only(self, pods: list[PodSeen], declared: Declared) -> str:
        """A test that needs a node running containers, whose pods were bound to simulated nodes and to no other."""
        bound = self._bound(pods)
        if not declared.needs_containers or not bound or not all(self._simulated(n) for n in bound):
            return ""
        count = sum(1 for p in pods if p.node)
        return (f"placement: the test needs a node that runs containers, and its {count} pod(s) were bound only to "
                f"simulated nodes, which run nothing: {', '.join(bound)}")

    def _placement_unknown(self, pods: list[PodSeen], span: _Span) -> str:
        """Where the pod watch did not see while the row ran and no pod of it was seen on a real node."""
        if any(p.node and not self._simulated(p.node) for p in pods):
            return ""
        windows = self.observer.blind_between(PODS, span.start, span.end)
        if not windows:
            return ""
        return f"{PLACEMENT_UNKNOWN}: the {PODS} watch did not see {_window(windows[0])} ({windows[0].error})"

    def _unseen(self, span: _Span) -> list[str]:
        """The node and Lease watches' blind windows while the row ran: evidence they could not give."""
        return [f"the {watch} watch did not see {_window(window)} ({window.error})"
                for watch in (NODES, LEASES)
                for window in self.observer.blind_between(watch, span.start, span.end + NODE_GRACE_SECONDS)[:1]]

    # -- failure classes -----------------------------------------------------------------------------------------
    def _span(self, attempt: Attempt) -> _Span:
        start = attempt.started or time.time() - attempt.duration
        return _Span(start, start + attempt.duration, self.declared.get(attempt.name, Declared()))

    def _classify(self, attempt: Attempt, pods: list[PodSeen], misplaced: str, stop: Stop, span: _Span,
                  pods_unseen: bool) -> tuple[FailureClass, str]:
        provoked = span.declared.provokes
        infrastructure = (self._pull_failure(pods, provoked) or self._lost_node(pods, span)
                          or self._outage(span) or misplaced)
        if infrastructure:
            return FailureClass.INFRASTRUCTURE, infrastructure
        if attempt.outcome is Outcome.INTERRUPTED and stop.reason and not stop.timed_out:
            return FailureClass.INFRASTRUCTURE, f"the run was stopped: {stop.reason}"
        if attempt.failed_during in SETUP_PHASES:
            return FailureClass.SETUP, f"its {attempt.failed_during} failed before the test body ran"
        if attempt.properties.timed_out:
            # A native test's message goes on with where it was: ' in step "…" at <file>:<line> in <function>'.
            return FailureClass.TIMEOUT, " ".join(("the per-test timeout cut it off", attempt.message.partition(
                "(per-test timeout)")[2].strip())).rstrip()
        if attempt.outcome is Outcome.INTERRUPTED and stop.timed_out:
            return FailureClass.TIMEOUT, f"the run timeout cut it off ({stop.reason})"
        provoked_words = ", ".join(p.value for p in Provokes if p in provoked)
        on_purpose = f" (what it provokes on purpose is no evidence: {provoked_words})" if provoked_words else ""
        # Where the pod watch did not see, whether its images pulled is as unknown as where its pods ran.
        looked_for = [*(["image pull failure"] if not pods_unseen and Provokes.PULL_FAILURES not in provoked else []),
                      *(["lost node"] if Provokes.NODE_DISRUPTION not in provoked else []), "API server outage"]
        return FailureClass.TEST, (f"an assertion failed; no {', '.join(looked_for)} or timeout was observed while "
                                   f"it ran{on_purpose}")

    def _pull_failure(self, pods: list[PodSeen], provoked: frozenset[Provokes]) -> str:
        if Provokes.PULL_FAILURES in provoked:
            return ""
        pulls = [f"pod {p.namespace}/{p.name}: {failure}" for p in pods for failure in p.pull_failures]
        return f"image pull failed: {'; '.join(pulls[:3])}" if pulls else ""

    def _lost_node(self, pods: list[PodSeen], span: _Span) -> str:
        """A node its pods were bound to went NotReady or away while it ran (or soon after, until a later test
        disrupted nodes on purpose), or its kubelet stopped renewing the node's Lease; not for a test that disrupts
        its node on purpose."""
        if Provokes.NODE_DISRUPTION in span.declared.provokes:
            return ""
        on = set(self._bound(pods))
        until = min([span.end + NODE_GRACE_SECONDS, *(s for s, _ in self.disruptions if span.end <= s)])
        lost = [c for c in self.observer.node_changes_between(span.start, until) if c.node in on and c.state != "True"]
        if lost:
            change = lost[0]
            return (f"node {change.node} went {change.state} ({change.reason}) at {_clock(change.at)} while the test "
                    "ran there")
        for node in sorted(on):
            if not self._simulated(node) and (stale := self._stale_lease(node, span.end)):
                return stale
        return ""

    def _stale_lease(self, node: str, end: float) -> str:
        """The node's Lease not renewed for longer than its own duration before the test ended, while the API server
        answered (no kubelet renews through one that does not) and the Lease watch saw."""
        last = self.observer.last_renewal(node, before=end)
        if last is None or end - last.at <= last.duration:
            return ""
        if self.observer.outages_between(last.at, end) or self.observer.blind_between(LEASES, last.at, end):
            return ""
        return (f"node {node}'s kubelet stopped renewing its Lease: last renewed at {_clock(last.at)}, "
                f"{end - last.at:.0f}s before the test ended there (the Lease lasts {last.duration:.0f}s)")

    def _outage(self, span: _Span) -> str:
        outages = self.observer.outages_between(span.start, span.end)
        if not outages:
            return ""
        return f"the API server did not answer {_window(outages[0])} ({outages[0].error})"


def _window(window: Outage, open_end: str = "to the end of the test") -> str:
    until = f"until {_clock(window.end)}" if window.end is not None else open_end
    return f"from {_clock(window.start)} {until}"


def _clock(moment: float) -> str:
    return time.strftime("%H:%M:%SZ", time.gmtime(moment))
