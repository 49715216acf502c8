"""What a run sees of its cluster while its tests run: where each pod ran and whether its containers started, which
images did not pull, when nodes went NotReady or away, when the API server stopped answering. Watched (pods, nodes)
and probed (/readyz) in threads of the run's own; the evidence its rows' placement and failure classes come from."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any

from kubernetes import client

from winsuite.cluster.api_guard import GuardedApiClient
from winsuite.k8s import waits

PULL_FAILURES = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
                           "RegistryUnavailable"})
PROBE_INTERVAL = 2.0  # seconds between the API server probes
PROBE_TIMEOUT = 3.0
RELIST_PAUSE = 1.0  # after a watch that could not go on: the list is asked for again
NODE_LEASES = "kube-node-lease"  # a kubelet's heartbeat: it renews its node's Lease here every 10 s


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


@dataclasses.dataclass
class Outage:
    """The API server not answering from `start` until `end` (None: not answering yet)."""

    start: float
    end: float | None
    error: str

    def overlaps(self, start: float, end: float) -> bool:
        return self.start <= end and (self.end is None or self.end >= start)


class Observer:
    def __init__(self, api: client.ApiClient) -> None:
        self.api = api
        self.pods: dict[tuple[str, str], PodSeen] = {}
        self.node_changes: list[NodeChange] = []
        self.outages: list[Outage] = []
        self.renewals: dict[str, list[float]] = {}  # node -> when its kubelet renewed its Lease (heartbeats)
        self.errors: list[str] = []  # what kept a watch from seeing (said in the evidence it could not give)
        self._ready: dict[str, str] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        core = client.CoreV1Api(api)
        self._threads = [
            threading.Thread(target=self._follow, args=(core.list_pod_for_all_namespaces, self._pod), daemon=True,
                             name="winsuite-pods"),
            threading.Thread(target=self._follow, args=(core.list_node, self._node), daemon=True,
                             name="winsuite-nodes"),
            threading.Thread(target=self._follow, args=(self._node_leases, self._lease), daemon=True,
                             name="winsuite-leases"),
            threading.Thread(target=self._probe, daemon=True, name="winsuite-readyz"),
        ]

    def __enter__(self) -> Observer:
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

    def last_renewal(self, node: str, before: float) -> float | None:
        """When the node's kubelet last renewed its Lease before `before` (None: no renewal was seen)."""
        with self._lock:
            earlier = [at for at in self.renewals.get(node, []) if at <= before]
        return max(earlier, default=None)

    def outages_between(self, start: float, end: float) -> list[Outage]:
        with self._lock:
            return [dataclasses.replace(o) for o in self.outages if o.overlaps(start, end)]

    # -- watching --------------------------------------------------------------------------------------------
    def _follow(self, list_fn: Callable[..., Any], seen: Callable[[str, Any], None]) -> None:
        """List, then watch from there without gaps; list again when the watch cannot go on."""
        while not self._stop.is_set():
            try:
                listed = list_fn(_request_timeout=30)
                for item in listed.items:
                    seen("ADDED", item)
                for event in waits.watch_from(list_fn, listed.metadata.resource_version, deadline=float("inf"),
                                              stop=self._stop, window=5.0):
                    seen(event["type"], event["object"])
            except Exception as err:  # an API server that went away: the probe records the outage; list again
                with self._lock:
                    self.errors = [*self.errors[-9:], f"{type(err).__name__}: {err}"[:300]]
                self._stop.wait(RELIST_PAUSE)

    def _pod(self, kind: str, pod: Any) -> None:
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

    def _node(self, kind: str, node: Any) -> None:
        name = node.metadata.name
        if kind == "DELETED":
            state, reason = "deleted", "the node was deleted"
        else:
            ready = next((c for c in (node.status.conditions or []) if c.type == "Ready"), None)
            state = ready.status if ready is not None else "Unknown"
            reason = (ready.reason or "") if ready is not None else "no Ready condition"
        with self._lock:
            if self._ready.get(name) != state:
                if name in self._ready:  # a change (the first sight of a node is its start)
                    self.node_changes.append(NodeChange(name, time.time(), state, reason))
                self._ready[name] = state

    def _node_leases(self, **kwargs: Any) -> Any:
        return client.CoordinationV1Api(self.api).list_namespaced_lease(NODE_LEASES, **kwargs)

    def _lease(self, kind: str, lease: Any) -> None:
        renewed = lease.spec.renew_time if lease.spec else None
        if kind == "DELETED" or renewed is None:
            return
        with self._lock:
            times = self.renewals.setdefault(lease.metadata.name, [])
            if not times or times[-1] != renewed.timestamp():
                times.append(renewed.timestamp())
                del times[:-100]  # the newest are what a test's end is compared with

    def _probe(self) -> None:
        """GET /readyz every PROBE_INTERVAL seconds: the windows the API server did not answer."""
        while not self._stop.wait(PROBE_INTERVAL):
            problem = self.api.serving_problem(PROBE_TIMEOUT) if isinstance(self.api, GuardedApiClient) else None
            now = time.time()
            with self._lock:
                current = self.outages[-1] if self.outages and self.outages[-1].end is None else None
                if problem is not None and current is None:
                    self.outages.append(Outage(now - PROBE_INTERVAL, None, problem))
                elif problem is None and current is not None:
                    current.end = now
