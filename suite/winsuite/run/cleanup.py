"""What a run leaves in the cluster, and how it keeps other runs' clean-up away while it runs: its Lease, its
namespaces, and what e2e.test left; and what runs killed before their clean-up left outside their namespaces."""

from __future__ import annotations

import functools
from collections.abc import Callable
from collections.abc import Collection

from kubernetes import client

from winsuite.cluster import load_balancer
from winsuite.k8s import run_leases
from winsuite.k8s.api_answer import error_line
from winsuite.k8s.namespaces import delete_run_namespaces
from winsuite.policy.run_config import RunConfig
from winsuite.run.console import Console
from winsuite.run.engines import placement_policy
from winsuite.run.engines.upstream import UpstreamEngine

# e2e.test's namespaces an interrupted ginkgo left take seconds to finalize; the run waits for those (its own
# namespaces it deletes without waiting).
NAMESPACE_DELETE_TIMEOUT = 120.0


def hold_lease(api: client.ApiClient, run: RunConfig, console: Console) -> run_leases.KeptLease | None:
    """The run's Lease, renewed while this process runs, so other runs' clean-up leaves this run's objects alone
    (and no longer than half a minute once it was killed)."""
    try:
        return run_leases.KeptLease(api, run.run_id).start()
    except Exception as err:  # e.g. no right to create Leases: the run goes on, only less protected
        console.say(f"winsuite: warning: the run's Lease was not created ({error_line(err, 160)}); "
                    "a concurrent run's cleanup could not tell this run is active", warning=True)
        return None


def clean_up(api: client.ApiClient, run: RunConfig, upstream: UpstreamEngine | None, console: Console) -> None:
    """The run's namespaces deleted, its Lease withdrawn, what e2e.test left removed; what could not be is listed
    for `winsuite cleanup`."""
    try:
        _delete(api, run, upstream, console)
    except Exception as err:  # clean-up must not hide the run's result; what is left is listed for later
        console.say(f"winsuite: warning: failed to delete the run's namespaces: {error_line(err)}; "
                    f"`winsuite cleanup --run-id {run.run_id}` deletes them once the cluster answers", warning=True)


def _delete(api: client.ApiClient, run: RunConfig, upstream: UpstreamEngine | None, console: Console) -> None:
    # Deleted, not awaited (as upstream's framework does): the namespace controller finishes in the background
    # and nothing of a later run depends on it; the run's ids keep them apart.
    left = delete_run_namespaces(api, run_id=run.run_id)
    if left:
        console.say(f"deleting {len(left)} namespace(s) of this run that were still there")
    run_leases.withdraw(api, run.run_id)
    if upstream is not None:
        others = run_leases.active_runs(api)
        left = upstream.cleanup(api, timeout=NAMESPACE_DELETE_TIMEOUT, other_runs=others)
        if left:
            console.say(f"deleted {len(left)} namespace(s) e2e.test left: {', '.join(left)}")
        elif others:
            console.say(f"e2e.test namespaces left for the last of the active runs to delete: {', '.join(others)}")


def remove_left(api: client.ApiClient, *, run_ids: Collection[str] | None, spare_runs: frozenset[str],
                dry_run: bool) -> list[str]:
    """What runs left outside their namespaces, each object labelled with its run: their Leases, placement policies
    and LoadBalancer probe Services; of the runs `run_ids`, or (None) of every run but `spare_runs` (the active
    ones). Each removed (or, `dry_run`, only found) as `<kind> <name> (run <id>)`."""

    def left_by(run_id: str) -> bool:
        return run_id in run_ids if run_ids is not None else run_id not in spare_runs

    core = client.CoreV1Api(api)
    found: list[tuple[str, str, Callable[[], None]]] = []  # (what, whose run, how it goes)
    found += [(f"Lease {run_leases.NAMESPACE}/{run_leases.PREFIX}{run_id}", run_id,
               functools.partial(run_leases.withdraw, api, run_id)) for run_id in run_leases.runs(api)]
    found += [(f"MutatingAdmissionPolicy {placement_policy.name_of(run_id)} and its binding", run_id,
               functools.partial(placement_policy.remove, api, run_id)) for run_id in placement_policy.placed_runs(api)]
    found += [(f"Service {load_balancer.PROBE_NAMESPACE}/{name}", run_id,
               functools.partial(load_balancer.delete_probe, core, name))
              for name, run_id in load_balancer.runs_probes(core).items()]
    removed = []
    for what, run_id, remove in sorted(found, key=lambda left: left[0]):
        if left_by(run_id):
            if not dry_run:
                remove()
            removed.append(f"{what} (run {run_id})")
    return removed
