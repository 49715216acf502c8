"""What a run sees of its cluster while its tests run: where each pod ran and whether its containers started, which
images did not pull, when nodes went NotReady or away, when kubelets renewed their nodes' Leases, when the API server
stopped answering, and when a watch could not see (a window in which the rows' evidence is unknown, not absent).
Watched (pods, nodes, Leases) and probed (/readyz) in threads of the run's own; the evidence its rows' placement and
failure classes come from.

Every moment is on the run's clock, and only ever compared with moments on it: a Lease's renewTime is written by its
holder's clock (a node's, which may be off by any amount), so a renewal is placed on the run's clock by the smallest
delay seen between that holder's renewTime and the watch delivering it: never later than it was seen, and never
moved by the holder's clock or by a watch event delivered late."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any

from kubernetes import client
from kubernetes.client import V1LeaseList
from kubernetes.client.exceptions import ApiException

from winsuite.cluster.api_guard import GuardedApiClient
from winsuite.k8s import retry
from winsuite.k8s import waits
from winsuite.k8s.api_answer import api_answer
from winsuite.k8s.nodes import is_simulated

PULL_FAILURES = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
                           "RegistryUnavailable"})
PROBE_INTERVAL = 2.0  # seconds between the API server probes
PROBE_TIMEOUT = 3.0
RELIST_PAUSE = 1.0  # after a watch that could not go on: the list is asked for again
NODE_LEASES = "kube-node-lease"  # a kubelet's heartbeat: it renews its node's Lease here every 10 s
DEFAULT_LEASE_SECONDS = 40.0  # a kubelet's nodeLeaseDurationSeconds when a Lease does not say its own
PODS, NODES, LEASES = "pods", "nodes", "Leases"  # the watches, as a row's evidence names them


@dataclasses.dataclass
class PodSeen:
    """One pod as the watch saw it over its life."""

    namespace: str
    name: str
    node: str = ""
    started: bool = False  # a container of it ran (running, or terminated after starting)
    pull_failures: list[str] = dataclasses.field(default_factory=list)  # "<image>: <reason>: <message>"


@dataclasses.dataclass(frozen=True)
class NodeChange:
    node: str
    at: float  # seconds since the epoch
    state: str  # the Ready condition's status (True, False, Unknown), or "deleted"
    reason: str


@dataclasses.dataclass(frozen=True)
class Renewal:
    """A Lease renewed by its holder: `renew_time` on the holder's clock, `seen` (when the watch delivered it) on
    the run's, `duration` its leaseDurationSeconds (after which the holder counts as gone)."""

    renew_time: float
    seen: float
    duration: float


@dataclasses.dataclass(frozen=True)
class LastRenewal:
    """A holder's last renewal before a moment, on the run's clock."""

    at: float
    duration: float


@dataclasses.dataclass
class Outage:
    """The API server not answering (or a watch not seeing) from `start` until `end` (None: not yet again)."""

    start: float
    end: float | None
    error: str

    def overlaps(self, start: float, end: float) -> bool:
        return self.start <= end and (self.end is None or self.end >= start)


class Observer:
    def __init__(self, api: client.ApiClient, clock: Callable[[], float] = time.time) -> None:
        self.api = api
        self.clock = clock
        self.pods: dict[tuple[str, str], PodSeen] = {}
        self.node_changes: list[NodeChange] = []
        self.outages: list[Outage] = []
        self.renewals: dict[str, list[Renewal]] = {}  # node -> its Lease's renewals (its kubelet's heartbeats)
        self.simulated: set[str] = set()  # nodes seen with kwok's annotation
        self.blind: dict[str, list[Outage]] = {}  # watch -> the windows it did not see (errors said in the rows)
        self.started = clock()
        self._listed: set[str] = set()  # the watches that listed at least once
        self._ready: dict[str, str] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        core = client.CoreV1Api(api)
        self._threads = [
            threading.Thread(target=self._follow, args=(PODS, core.list_pod_for_all_namespaces, self.on_pod),
                             daemon=True, name="winsuite-pods"),
            threading.Thread(target=self._follow, args=(NODES, core.list_node, self.on_node), daemon=True,
                             name="winsuite-nodes"),
            threading.Thread(target=self._follow, args=(LEASES, self._node_leases, self.on_lease), daemon=True,
                             name="winsuite-leases"),
            threading.Thread(target=self._probe, daemon=True, name="winsuite-readyz"),
        ]

    def __enter__(self) -> Observer:
        self.started = self.clock()
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=waits.POLL_INTERVAL + 10)

    # -- what was seen ---------------------------------------------------------------------------------------
    def pods_in(self, namespaces: Iterable[str]) -> list[PodSeen]:
        wanted = set(namespaces)
        with self._lock:
            return [dataclasses.replace(p, pull_failures=list(p.pull_failures)) for p in self.pods.values()
                    if p.namespace in wanted]

    def node_changes_between(self, start: float, end: float) -> list[NodeChange]:
        with self._lock:
            return [c for c in self.node_changes if start <= c.at <= end]

    def last_renewal(self, node: str, before: float) -> LastRenewal | None:
        """When the node's Lease was last renewed before `before`, on the run's clock (None: no renewal seen)."""
        with self._lock:
            renewals = list(self.renewals.get(node, []))
        if not renewals:
            return None
        offset = min(r.seen - r.renew_time for r in renewals)  # the holder's clock to the run's, delay included
        earlier = [r for r in renewals if r.renew_time + offset <= before]
        if not earlier:
            return None
        last = max(earlier, key=lambda r: r.renew_time)
        return LastRenewal(last.renew_time + offset, last.duration)

    def outages_between(self, start: float, end: float) -> list[Outage]:
        with self._lock:
            return [dataclasses.replace(o) for o in self.outages if o.overlaps(start, end)]

    def blind_between(self, watch: str, start: float, end: float) -> list[Outage]:
        """The windows in which `watch` did not see, overlapping [start, end]."""
        with self._lock:
            return [dataclasses.replace(o) for o in self.blind.get(watch, []) if o.overlaps(start, end)]

    def is_simulated(self, node: str) -> bool:
        with self._lock:
            return node in self.simulated

    # -- watching --------------------------------------------------------------------------------------------
    def _follow(self, watch: str, list_fn: Callable[..., Any], seen: Callable[[str, Any], None]) -> None:
        """List, then watch from there without gaps; list again when the watch cannot go on (the time between is a
        window the watch did not see)."""
        while not self._stop.is_set():
            try:
                listed = list_fn(_request_timeout=30)
                self.saw(watch)
                for item in listed.items:
                    seen("ADDED", item)
                for event in waits.watch_from(list_fn, listed.metadata.resource_version, deadline=float("inf"),
                                              stop=self._stop, window=5.0):
                    seen(event["type"], event["object"])
            except Exception as err:  # an API server that went away (the probe records the outage), or a refusal
                self.lost(watch, _why(err))
                self._stop.wait(RELIST_PAUSE)

    def saw(self, watch: str) -> None:
        """The watch listed: it sees again from now."""
        now = self.clock()
        with self._lock:
            self._listed.add(watch)
            windows = self.blind.get(watch, [])
            if windows and windows[-1].end is None:
                windows[-1].end = now

    def lost(self, watch: str, error: str) -> None:
        """The watch could not go on (or never listed): blind from now (from the start, if it never saw), until it
        lists again."""
        now = self.clock()
        with self._lock:
            windows = self.blind.setdefault(watch, [])
            if not windows or windows[-1].end is not None:
                windows.append(Outage(now if watch in self._listed else self.started, None, error))

    def on_pod(self, kind: str, pod: Any) -> None:
        """A pod as the watch delivered it: where it is bound, whether a container started, pull failures."""
        key = (pod.metadata.namespace, pod.metadata.name)
        status = pod.status or client.V1PodStatus()
        with self._lock:
            record = self.pods.setdefault(key, PodSeen(*key))
            record.node = (pod.spec.node_name if pod.spec else "") or record.node
            for container in [*(status.init_container_statuses or []), *(status.container_statuses or [])]:
                state = container.state or client.V1ContainerState()
                if state.running is not None or (state.terminated is not None and state.terminated.started_at):
                    record.started = True
                waiting = state.waiting
                if waiting is not None and waiting.reason in PULL_FAILURES:
                    failure = f"{container.image}: {waiting.reason}: {(waiting.message or '').strip()[:300]}"
                    if failure not in record.pull_failures:
                        record.pull_failures.append(failure)

    def on_node(self, kind: str, node: Any) -> None:
        """A node as the watch delivered it: a change of its Ready condition (or its deletion), whether kwok
        simulates it."""
        name = node.metadata.name
        if kind == "DELETED":
            state, reason = "deleted", "the node was deleted"
        else:
            ready = next((c for c in (node.status.conditions or []) if c.type == "Ready"), None)
            state = ready.status if ready is not None else "Unknown"
            reason = (ready.reason or "") if ready is not None else "no Ready condition"
        now = self.clock()
        with self._lock:
            if is_simulated(node):
                self.simulated.add(name)
            if self._ready.get(name) != state:
                if name in self._ready:  # a change (the first sight of a node is its start)
                    self.node_changes.append(NodeChange(name, now, state, reason))
                self._ready[name] = state

    def _node_leases(self, **kwargs: Any) -> V1LeaseList:
        """The node Leases, listed or watched. The watch makes its events' objects of the type this function's return
        annotation names (a string naming a client model): without it, they would be plain dicts."""
        return client.CoordinationV1Api(self.api).list_namespaced_lease(NODE_LEASES, **kwargs)

    def on_lease(self, kind: str, lease: Any) -> None:
        """A node's Lease as the watch delivered it: a renewal when its renewTime moved."""
        spec = lease.spec
        renewed = spec.renew_time if spec else None
        if kind == "DELETED" or renewed is None:
            return
        duration = float(spec.lease_duration_seconds or DEFAULT_LEASE_SECONDS)
        now = self.clock()
        with self._lock:
            renewals = self.renewals.setdefault(lease.metadata.name, [])
            if not renewals or renewals[-1].renew_time != renewed.timestamp():  # a relist repeats the last one
                renewals.append(Renewal(renewed.timestamp(), now, duration))
                del renewals[:-100]  # the newest are what a test's end is compared with

    def _probe(self) -> None:
        """GET /readyz every PROBE_INTERVAL seconds: the windows the API server did not answer."""
        while not self._stop.wait(PROBE_INTERVAL):
            problem = self.api.serving_problem(PROBE_TIMEOUT) if isinstance(self.api, GuardedApiClient) else None
            self.probed(problem)

    def probed(self, problem: str | None) -> None:
        """The API guard's answer to one probe: `problem` when the API server did not answer, else None."""
        now = self.clock()
        with self._lock:
            current = self.outages[-1] if self.outages and self.outages[-1].end is None else None
            if problem is not None and current is None:
                self.outages.append(Outage(now - PROBE_INTERVAL, None, problem))
            elif problem is None and current is not None:
                current.end = now


def _why(err: BaseException) -> str:
    """A watch's error in one line: the API server's own answer where it refused (RBAC's words), else the error."""
    cause = err if isinstance(err, ApiException) else err.__cause__
    if isinstance(cause, ApiException):
        return api_answer(cause)[:300]
    return retry.describe(err)[:300]
