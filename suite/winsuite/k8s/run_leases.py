"""Which winsuite runs are active on a cluster: each run holds a Lease while it runs, so that another run's
cleanup, or `winsuite cleanup`, leaves what an active run owns alone.

A run whose process follows it renews a short Lease as it goes (`KeptLease`), so a run that was killed stops
counting within half a minute. A run that no process here follows (an in-cluster run, which may be detached)
holds one Lease for its whole run timeout and a margin.

Whether a Lease has run out is judged by the API server's clock, the one clock every run and cleanup shares: a
holder writes renewTime as the server's time (its own clock corrected by the server's Date header), and a judge
compares renewTime + leaseDurationSeconds with the time the server answered its listing at."""

from __future__ import annotations

import contextlib
import datetime
import email.utils
import threading
from collections.abc import Mapping
from typing import Any

from kubernetes import client

from winsuite.k8s import retry
from winsuite.k8s.namespaces import RUN_ID_LABEL
from winsuite.k8s.not_found import ignore_not_found

NAMESPACE = "default"
PREFIX = "winsuite-run-"
MARGIN_SECONDS = 600  # cleanup and result writing after the run timeout
KEPT_SECONDS = 30  # a renewed Lease's duration: what a killed run still counts as active
RENEW_SECONDS = 10  # three renewals per duration, so that one the API server misses does not end the Lease


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def server_time(headers: Mapping[str, str] | None) -> datetime.datetime | None:
    """The time an answer of the API server carries (its Date header, to the second), None without one."""
    date = (headers or {}).get("Date")
    return email.utils.parsedate_to_datetime(date) if date else None


class ServerClock:
    """The API server's time as this process reckons it: its own clock plus the offset the server's last answer
    showed (an answer without a Date header leaves the offset as it was)."""

    def __init__(self) -> None:
        self.offset = datetime.timedelta(0)

    def now(self) -> datetime.datetime:
        return _now() + self.offset

    def answered(self, headers: Mapping[str, str] | None) -> None:
        served = server_time(headers)
        if served is not None:
            self.offset = served - _now()

    def sync(self, api: client.ApiClient) -> ServerClock:
        """Set by one answer of the server (GET /version), before this process writes its first time."""
        _, _, headers = retry.call(client.VersionApi(api).get_code_with_http_info)
        self.answered(headers)
        return self


def register(api: client.ApiClient, run_id: str, run_timeout: float) -> None:
    """The Lease of a run that no process here follows: for its run timeout and a margin."""
    _create(api, run_id, run_timeout + MARGIN_SECONDS, ServerClock().sync(api))


def _create(api: client.ApiClient, run_id: str, duration: float, clock: ServerClock) -> None:
    now = clock.now()
    lease = client.V1Lease(
        metadata=client.V1ObjectMeta(name=PREFIX + run_id, labels={RUN_ID_LABEL: run_id}),
        spec=client.V1LeaseSpec(holder_identity=run_id, acquire_time=now, renew_time=now,
                                lease_duration_seconds=int(duration)),
    )
    _, _, headers = retry.call(client.CoordinationV1Api(api).create_namespaced_lease_with_http_info, NAMESPACE,
                               lease)
    clock.answered(headers)


def renew(api: client.ApiClient, run_id: str, clock: ServerClock) -> None:
    patch = {"spec": {"renewTime": clock.now().isoformat()}}
    _, _, headers = client.CoordinationV1Api(api).patch_namespaced_lease_with_http_info(PREFIX + run_id, NAMESPACE,
                                                                                        patch)
    clock.answered(headers)


def withdraw(api: client.ApiClient, run_id: str) -> None:
    with ignore_not_found():
        retry.call(client.CoordinationV1Api(api).delete_namespaced_lease, PREFIX + run_id, NAMESPACE)


class KeptLease:
    """The run's short Lease, renewed by a thread of this process until `stop` (withdrawing it is the run's
    clean-up). A renewal that fails is tried again at the next one: the run's own API guard reports a lost API
    server."""

    def __init__(self, api: client.ApiClient, run_id: str, *, duration: float = KEPT_SECONDS,
                 every: float = RENEW_SECONDS) -> None:
        self.api, self.run_id = api, run_id
        self.duration, self.every = duration, every
        self.clock = ServerClock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._keep, name=f"lease-{run_id}", daemon=True)

    def start(self) -> KeptLease:
        _create(self.api, self.run_id, self.duration, self.clock.sync(self.api))
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.every)

    def _keep(self) -> None:
        while not self._stopped.wait(self.every):
            with contextlib.suppress(Exception):  # see the class: the next renewal tries again
                renew(self.api, self.run_id, self.clock)


def active_runs(api: client.ApiClient, *, besides: str | None = None) -> list[str]:
    """Run ids of the runs holding an unexpired Lease (other than `besides`)."""
    return sorted(run_id for run_id, active in runs(api).items() if active and run_id != besides)


def runs(api: client.ApiClient) -> dict[str, bool]:
    """Every run holding a Lease, and whether that Lease is unexpired by the API server's clock (its time when it
    answered this listing: a run's own clock, off by minutes, must not keep a dead run alive or end a live one)."""
    listing: Any
    listing, _, headers = retry.call(client.CoordinationV1Api(api).list_namespaced_lease_with_http_info, NAMESPACE,
                                     label_selector=RUN_ID_LABEL)
    now = server_time(headers) or _now()  # an answer without Date (a proxy's): this process's clock is all there is
    held = {}
    for lease in listing.items:
        spec = lease.spec
        renewed = (spec.renew_time or spec.acquire_time) if spec is not None else None
        held[lease.metadata.labels[RUN_ID_LABEL]] = renewed is not None and now < renewed + datetime.timedelta(
            seconds=spec.lease_duration_seconds or 0)
    return held
