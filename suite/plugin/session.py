"""One run session per pytest process: the run's configuration and its cluster (connection + facts), made on first use.

The stash keys and their accessors live here, so every part of the plugin reaches the run the same way.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import pytest

from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.target import ClusterSession
from winsuite.cluster.connect import Connection
from winsuite.cluster.connect import connect
from winsuite.cluster.discovery import discover
from winsuite.cluster.kubectl import with_kubectl
from winsuite.cluster.load_balancer import PROBE_TIMEOUT
from winsuite.errors import UsageError
from winsuite.policy import options
from winsuite.policy.run_config import RunConfig
from winsuite.policy.run_config import build_run_config

RUN_CONFIG_KEY = pytest.StashKey[RunConfig]()
SESSION_KEY = pytest.StashKey["RunSession"]()


@dataclasses.dataclass(frozen=True)
class RunSession:
    """The run (its configuration, with the cluster's facts applied), the connection and the facts."""

    run: RunConfig
    connection: Connection
    facts: ClusterFacts

    def resolve_image(self, image_id: str, *, target_os: str, windows_build: str | None) -> str:
        return self.run.images.resolve(image_id, self.run.repo_list, target_os=target_os, windows_build=windows_build)

    @functools.cached_property
    def for_cases(self) -> ClusterSession:
        """What tests see of it (they import the authoring vocabulary only)."""
        return ClusterSession(api=self.connection.api, facts=self.facts, placement=self.run.placement,
                              run_id=self.run.run_id, kubeconfig=self.connection.kubeconfig,
                              context=self.connection.context)


def open_session(run: RunConfig, discovery_file: Path | None = None, *,
                 probe_load_balancer: bool = False) -> RunSession:
    """Connect as the job says and discover the cluster, or reuse the facts `winsuite run` already discovered;
    `probe_load_balancer` when a selected test needs a LoadBalancer implementation (a probe Service is made)."""
    connection = connect(run.job.cluster)
    if discovery_file is not None:
        facts = ClusterFacts.load(discovery_file)
    else:
        facts = with_kubectl(discover(connection.api, connection.server_version,
                                      windows_builds=run.images.windows_builds(),
                                      egress_allowed=connection.target.allows_egress,
                                      load_balancer_probe=PROBE_TIMEOUT if probe_load_balancer else 0.0))
    return RunSession(run.with_facts(facts), connection, facts)


def run_config(config: pytest.Config) -> RunConfig:
    """The run's configuration, built on first use so plain pytest runs without winsuite tests stay inert."""
    if RUN_CONFIG_KEY not in config.stash:
        get = config.getoption
        try:
            config.stash[RUN_CONFIG_KEY] = build_run_config(
                options.job_ref(get),
                options.overrides(get),
                run_id=get("winsuite_run_id"),
                phase=get("winsuite_phase") or "all",
            )
        except UsageError as err:  # a bad job, repo list or exclusion file: one line, no traceback
            raise pytest.UsageError(str(err)) from err
    return config.stash[RUN_CONFIG_KEY]


def run_session(config: pytest.Config) -> RunSession:
    if SESSION_KEY not in config.stash:
        discovery = config.getoption("winsuite_discovery")
        try:
            config.stash[SESSION_KEY] = open_session(run_config(config), Path(discovery) if discovery else None)
        except UsageError as err:
            raise pytest.UsageError(str(err)) from err
    return config.stash[SESSION_KEY]


def close_session(config: pytest.Config) -> None:
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:
        session.connection.api.close()
