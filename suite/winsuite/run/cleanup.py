"""What a run leaves in the cluster, and how it keeps other runs' clean-up away while it runs: its Lease, its
namespaces, and what e2e.test left."""

from __future__ import annotations

from kubernetes import client

from winsuite.errors import one_line
from winsuite.k8s import run_leases
from winsuite.k8s.namespaces import delete_run_namespaces
from winsuite.policy.run_config import RunConfig
from winsuite.run.console import Console
from winsuite.run.engines.upstream import UpstreamEngine

# e2e.test's namespaces an interrupted ginkgo left take seconds to finalize; the run waits for those (its own
# namespaces it deletes without waiting).
NAMESPACE_DELETE_TIMEOUT = 120.0


def hold_lease(api: client.ApiClient, run: RunConfig, console: Console) -> run_leases.KeptLease | None:
    """The run's Lease, renewed while this process runs, so other runs' clean-up leaves this run's objects alone
    (and no longer than a minute and a half once it was killed)."""
    try:
        return run_leases.KeptLease(api, run.run_id).start()
    except Exception as err:  # e.g. no right to create Leases: the run goes on, only less protected
        console.say(f"winsuite: warning: the run's Lease was not created ({one_line(str(err), 160)}); "
                    "a concurrent run's cleanup could not tell this run is active", warning=True)
        return None


def clean_up(api: client.ApiClient, run: RunConfig, upstream: UpstreamEngine | None, console: Console) -> None:
    """The run's namespaces deleted, its Lease withdrawn, what e2e.test left removed; what could not be is listed
    for `winsuite cleanup`."""
    try:
        _delete(api, run, upstream, console)
    except Exception as err:  # clean-up must not hide the run's result; what is left is listed for later
        console.say(f"winsuite: warning: failed to delete the run's namespaces: {one_line(str(err))}; "
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
