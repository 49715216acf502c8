"""Which winsuite runs are active on a cluster: each run holds a Lease while it runs, so that another run's
cleanup, or `winsuite cleanup`, leaves what an active run owns alone.

A run whose process follows it renews a short Lease as it goes (`KeptLease`), so a run that was killed stops
counting within a minute and a half. A run that no process here follows (an in-cluster run, which may be detached)
holds one Lease for its whole run timeout and a margin."""

from __future__ import annotations

import contextlib
import datetime
import threading
from typing import Any

from kubernetes import client

from winsuite.k8s import retry
from winsuite.k8s.namespaces import RUN_ID_LABEL
from winsuite.k8s.not_found import ignore_not_found

NAMESPACE = "default"
PREFIX = "winsuite-run-"
MARGIN_SECONDS = 600  # cleanup and result writing after the run timeout
KEPT_SECONDS = 90  # a renewed Lease's duration: what a killed run still counts as active
RENEW_SECONDS = 20  # several renewals per duration, so that one the API server misses does not end the Lease


def register(api: client.ApiClient, run_id: str, run_timeout: float) -> None:
    """The Lease of a run that no process here follows: for its run timeout and a margin."""
    _create(api, run_id, run_timeout + MARGIN_SECONDS)


def _create(api: client.ApiClient, run_id: str, duration: float) -> None:
    now = datetime.datetime.now(datetime.UTC)
    lease = client.V1Lease(
        metadata=client.V1ObjectMeta(name=PREFIX + run_id, labels={RUN_ID_LABEL: run_id}),
        spec=client.V1LeaseSpec(holder_identity=run_id, acquire_time=now, renew_time=now,
                                lease_duration_seconds=int(duration)),
    )
    retry.call(client.CoordinationV1Api(api).create_namespaced_lease, NAMESPACE, lease)


def renew(api: client.ApiClient, run_id: str) -> None:
    now = datetime.datetime.now(datetime.UTC).isoformat()
    client.CoordinationV1Api(api).patch_namespaced_lease(PREFIX + run_id, NAMESPACE, {"spec": {"renewTime": now}})


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
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._keep, name=f"lease-{run_id}", daemon=True)

    def start(self) -> KeptLease:
        _create(self.api, self.run_id, self.duration)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.every)

    def _keep(self) -> None:
        while not self._stopped.wait(self.every):
            with contextlib.suppress(Exception):  # see the class: the next renewal tries again
                renew(self.api, self.run_id)


def active_runs(api: client.ApiClient, *, besides: str | None = None) -> list[str]:
    """Run ids of the runs holding an unexpired Lease (other than `besides`)."""
    listing: Any = retry.call(client.CoordinationV1Api(api).list_namespaced_lease, NAMESPACE,
                              label_selector=RUN_ID_LABEL)
    now = datetime.datetime.now(datetime.UTC)
    active = []
    for lease in listing.items:
        spec = lease.spec
        run_id = lease.metadata.labels.get(RUN_ID_LABEL, "")
        if run_id == besides or spec is None or spec.renew_time is None:
            continue
        if now < spec.renew_time + datetime.timedelta(seconds=spec.lease_duration_seconds or 0):
            active.append(run_id)
    return sorted(active)
