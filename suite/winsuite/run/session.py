"""The runner's session: connect as the run says, discover the cluster once, and keep what was discovered."""

from __future__ import annotations

from winsuite.cluster.connect import connect
from winsuite.cluster.connect import discover_cluster
from winsuite.plugin.session import RunSession
from winsuite.policy.run_config import RunConfig
from winsuite.results.prow import DISCOVERY_FILE
from winsuite.run import permissions
from winsuite.run.console import Console


def open_session(run: RunConfig, console: Console, *, probe_load_balancer: bool = False,
                 ask_permissions: bool = False) -> RunSession:
    """Connected and discovered: the facts go into the run (every process of it gets them with the run document)
    and, when the run has a build, into its discovery.json. `ask_permissions`: first, the run's needs are asked of the
    API server (permissions.py), before discovery makes its LoadBalancer probe."""
    console.say(f"connecting to the cluster ({run.job.cluster.type})")
    connection = connect(run.job.cluster)
    if ask_permissions:
        permissions.check(connection.api, run)
    facts = discover_cluster(connection, run.images.windows_builds(),
                             probe_load_balancer_for=run.run_id if probe_load_balancer else None)
    if run.output is not None:
        run.output.artifacts.mkdir(parents=True, exist_ok=True)
        (run.output.artifacts / DISCOVERY_FILE).write_text(facts.to_json())
    nodes = ", ".join(f"{n.name} ({n.os}{', simulated' if n.simulated else ''})" for n in facts.nodes)
    console.say(f"cluster {connection.server} {facts.server_version}: {nodes}")
    for warning in facts.warnings:
        console.say(f"winsuite: warning: {warning}", warning=True)
    return RunSession(run.with_facts(facts), connection, facts)
