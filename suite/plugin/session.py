"""One cluster session per pytest process: the connection and the discovered facts, made on first use."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from winsuite.cluster.connect import Connection
from winsuite.cluster.connect import connect
from winsuite.cluster.discovery import ClusterFacts
from winsuite.cluster.discovery import discover
from winsuite.errors import UsageError
from winsuite.policy.run_config import RunConfig

SESSION_KEY = pytest.StashKey["ClusterSession"]()


@dataclasses.dataclass
class ClusterSession:
    run: RunConfig
    connection: Connection
    facts: ClusterFacts


def open_session(run: RunConfig, discovery_file: str | None) -> ClusterSession:
    """Connect as the job says; reuse the facts `winsuite run` discovered when it passes them."""
    connection = connect(run.job.cluster)
    if discovery_file:
        facts = ClusterFacts.load(Path(discovery_file))
    else:
        facts = discover(connection.api, connection.server_version, catalog=run.catalog,
                         egress_allowed=run.job.cluster.type != "embedded")
    return ClusterSession(run.with_facts(facts.scope_facts()), connection, facts)


def cluster_session(config: pytest.Config) -> ClusterSession:
    if SESSION_KEY not in config.stash:
        from winsuite.plugin.wiring import run_config

        try:
            config.stash[SESSION_KEY] = open_session(run_config(config), config.getoption("winsuite_discovery"))
        except UsageError as err:
            raise pytest.UsageError(str(err)) from err
    return config.stash[SESSION_KEY]


def close_session(config: pytest.Config) -> None:
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:
        session.connection.api.close()
