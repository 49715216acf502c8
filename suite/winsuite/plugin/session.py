"""One run session per pytest process: the resolved run and its cluster (connection + facts), made on first use.

The stash keys and their accessors live here, so every part of the plugin reaches the run the same way. Under
`winsuite run` (and in xdist workers) the run arrives whole, as a document; a plain `pytest --pyargs winsuite.cases`
resolves it from its options once, in the xdist controller, and hands it to its workers.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from pathlib import Path
from typing import Any

import pytest

from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.target import ClusterSession
from winsuite.cluster.connect import Connection
from winsuite.cluster.connect import connect
from winsuite.cluster.connect import discover_cluster
from winsuite.errors import UsageError
from winsuite.inputs.run_modes import Phase
from winsuite.policy import options
from winsuite.policy.run_config import Output
from winsuite.policy.run_config import RunConfig
from winsuite.policy.run_config import resolve_run

RUN_CONFIG_KEY = pytest.StashKey[RunConfig]()
SESSION_KEY = pytest.StashKey["RunSession"]()
WORKER_INPUT_KEY = "winsuite_run"  # the run document an xdist worker gets from its controller


@dataclasses.dataclass(frozen=True)
class RunSession:
    """The run (with the cluster's facts applied), the connection and the facts."""

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


def _resolved(config: pytest.Config) -> RunConfig:
    """The run document given (`--run-file`, or an xdist controller's), else the run the options describe."""
    worker_input: dict[str, Any] | None = getattr(config, "workerinput", None)
    if worker_input is not None and WORKER_INPUT_KEY in worker_input:
        return RunConfig.from_document(json.loads(worker_input[WORKER_INPUT_KEY]), "the xdist controller's run")
    get = config.getoption
    run_file = get("winsuite_run_file")
    if run_file:
        return RunConfig.load(Path(run_file))
    run = resolve_run(options.job_ref(get), options.overrides(get), environ=os.environ)
    results = get("winsuite_results_dir")
    if not results:
        return run
    build_dir = Path(results).resolve().parent
    return dataclasses.replace(run, output=Output(build_dir, build_dir.name, results=Path(results).resolve()))


def run_config(config: pytest.Config) -> RunConfig:
    """The run, made on first use so plain pytest runs without winsuite tests stay inert."""
    if RUN_CONFIG_KEY not in config.stash:
        try:
            run = _resolved(config)
        except UsageError as err:  # a bad job, repo list or exclusion file: one line, no traceback
            raise pytest.UsageError(str(err)) from err
        phase = config.getoption("winsuite_phase")
        config.stash[RUN_CONFIG_KEY] = dataclasses.replace(run, phase=Phase(phase)) if phase else run
    return config.stash[RUN_CONFIG_KEY]


def worker_input(config: pytest.Config) -> str:
    """The run as the document each xdist worker starts from (so no worker resolves it again)."""
    return json.dumps(run_config(config).to_document())


def run_session(config: pytest.Config) -> RunSession:
    if SESSION_KEY not in config.stash:
        run = run_config(config)
        try:
            connection = connect(run.job.cluster)
            facts = run.facts or discover_cluster(connection, run.images.windows_builds(),
                                                  probe_load_balancer_for=None)
        except UsageError as err:
            raise pytest.UsageError(str(err)) from err
        config.stash[SESSION_KEY] = RunSession(run.with_facts(facts), connection, facts)
    return config.stash[SESSION_KEY]


def close_session(config: pytest.Config) -> None:
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:
        session.connection.api.close()
