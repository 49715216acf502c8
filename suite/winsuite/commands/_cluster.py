"""The cluster `winsuite list` and `winsuite images` answer for when --kubeconfig (or --context) names one: connected
and discovered as a run discovers it, nothing made in it (no LoadBalancer probe)."""

from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING

from winsuite.commands._output import warn

if TYPE_CHECKING:
    from winsuite.authoring.facts import ClusterFacts
    from winsuite.policy.run_config import RunConfig

NOT_PROBED = ("no Service of type LoadBalancer has an ingress address, and nothing was probed (a run that selects "
              "such a test makes a probe Service first)")


def asked(args: argparse.Namespace) -> bool:
    """Whether the command names a cluster to answer for; without one it answers from the job alone."""
    return bool(args.winsuite_kubeconfig or args.winsuite_context)


def discovered(config: RunConfig) -> RunConfig:
    """`config` with the facts of its job's cluster (discovery's warnings said on stderr)."""
    from winsuite.cluster.connect import connect
    from winsuite.cluster.discovery import discover

    connection = connect(config.job.cluster, start_embedded=False)
    # No kubectl chosen, no probe: nothing these commands say depends on them.
    facts = discover(connection.api, connection.server_version, windows_builds=config.images.windows_builds(),
                     egress_allowed=connection.target.allows_egress)
    if not facts.load_balancer:
        facts = dataclasses.replace(facts, no_load_balancer=NOT_PROBED)
    for warning in facts.warnings:
        warn(warning)
    return config.with_facts(facts)


def described(facts: ClusterFacts) -> str:
    """The cluster in one line: its server, version and nodes."""
    nodes = ", ".join(f"{n.name} ({n.os}{', simulated' if n.simulated else ''})" for n in facts.nodes)
    return f"cluster {facts.server} {facts.server_version}: {nodes or 'no nodes'}"
