"""Which winsuite runs are active on a cluster: each run holds a Lease while it runs, so that another run's
cleanup, or `winsuite cleanup`, leaves what an active run owns alone. A run that died without withdrawing its
Lease stops counting once the Lease's duration (the run timeout and a margin) has passed."""

from __future__ import annotations

import datetime
from typing import Any

from kubernetes import client

from winsuite.k8s import retry
from winsuite.k8s.namespaces import RUN_ID_LABEL
from winsuite.k8s.not_found import ignore_not_found

NAMESPACE = "default"
PREFIX = "winsuite-run-"
MARGIN_SECONDS = 600  # cleanup and result writing after the run timeout


def register(api: client.ApiClient, run_id: str, run_timeout: float) -> None:
    now = datetime.datetime.now(datetime.UTC)
    lease = client.V1Lease(
        metadata=client.V1ObjectMeta(name=PREFIX + run_id, labels={RUN_ID_LABEL: run_id}),
        spec=client.V1LeaseSpec(holder_identity=run_id, acquire_time=now, renew_time=now,
                                lease_duration_seconds=int(run_timeout) + MARGIN_SECONDS),
    )
    retry.call(client.CoordinationV1Api(api).create_namespaced_lease, NAMESPACE, lease)


def withdraw(api: client.ApiClient, run_id: str) -> None:
    with ignore_not_found():
        retry.call(client.CoordinationV1Api(api).delete_namespaced_lease, PREFIX + run_id, NAMESPACE)


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
