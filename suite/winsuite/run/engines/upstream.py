"""The upstream engine of one run: which specs exist, the toolchain (resolved once, when first needed), its phases."""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from kubernetes import client

from winsuite.authoring.targeting import SIMULATED_NODE_TAINT_KEY
from winsuite.errors import UsageError
from winsuite.k8s import run_leases
from winsuite.k8s.namespaces import delete_e2e_namespaces
from winsuite.k8s.namespaces import e2e_namespaces
from winsuite.plugin.session import RunSession
from winsuite.policy.catalog import tags_of_name
from winsuite.policy.plan import Plan
from winsuite.policy.plan import load_plan
from winsuite.policy.run_config import RunConfig
from winsuite.policy.upstream_names import names_for_minor
from winsuite.policy.upstream_names import parse_list_tests
from winsuite.results.model import Attempt
from winsuite.run.engines import placement_policy
from winsuite.run.engines.base import PhaseSpec
from winsuite.run.engines.ginkgo_phase import UpstreamPhase
from winsuite.run.engines.ginkgo_phase import UpstreamSettings
from winsuite.run.engines.upstream_toolchain import Toolchain
from winsuite.run.engines.upstream_toolchain import resolve
from winsuite.versions import minor_of

# Taints that never block e2e.test's "all nodes schedulable" wait: upstream's default, plus the simulated nodes'.
REPO_LIST_FILE = "repo-list.yaml"  # in the build's artifacts
NON_BLOCKING_TAINTS = ("node-role.kubernetes.io/control-plane", SIMULATED_NODE_TAINT_KEY)


def list_tests(e2e_test: Path) -> list[str]:
    done = subprocess.run([str(e2e_test), "--list-tests"], capture_output=True, text=True, timeout=300,
                          check=False)
    if done.returncode != 0:
        raise UsageError(f"{e2e_test} --list-tests failed: {done.stderr.strip()[-300:]}")
    return parse_list_tests(done.stdout)


class UpstreamEngine:
    def __init__(self, run: RunConfig, artifacts: Path, log: TextIO, say: Callable[[str], None]) -> None:
        self.run = run
        self.artifacts = artifacts
        self.log = log
        self.say = say
        self._toolchain: Toolchain | None = None
        self._plan = load_plan()
        self.namespaces_before: set[str] | None = None  # e2e.test's namespaces before its first phase
        self.placement_installed = False

    def toolchain(self, server_version: str) -> Toolchain:
        if self._toolchain is None:
            self._toolchain = resolve(self.run.job.e2e_test, server_version, self.say)
            version = self._toolchain.kubernetes_version
            self.say(f"upstream engine: {self._toolchain.e2e_test} ({version}), ginkgo "
                     f"{self._toolchain.ginkgo_version}")
            if minor_of(version) != minor_of(server_version):
                self.say(f"winsuite: warning: e2e.test is {version} but the API server is {server_version}; "
                         "specs of one minor may not match the other's behaviour")
        return self._toolchain

    def names(self, server_version: str) -> list[str]:
        """The upstream specs of the cluster's minor: the given e2e.test's, else the kept list, else the built one's."""
        if not self.run.job.e2e_test:
            kept = names_for_minor(server_version)
            if kept is not None:
                return kept
        return list_tests(self.toolchain(server_version).e2e_test)

    def phase(self, spec: PhaseSpec, names: list[str], session: RunSession, deadline: float) -> UpstreamPhase:
        job = self.run.job
        connection = session.connection
        if self.namespaces_before is None:
            self.namespaces_before = e2e_namespaces(connection.api)
            active = {*run_leases.active_runs(connection.api), self.run.run_id}
            stale = placement_policy.remove_stale(connection.api, active)
            if stale:
                self.say(f"upstream engine: removed the placement policies of runs no longer active: "
                         f"{', '.join(stale)}")
            self.placement_installed = placement_policy.install(connection.api, self.run.run_id, self.run.placement)
            self.say(f"upstream engine: e2e.test's pods placed on {self.run.target_os} nodes by the "
                     f"MutatingAdmissionPolicy {placement_policy.name_of(self.run.run_id)}"
                     if self.placement_installed else f"winsuite: warning: {placement_policy.NO_API}")
        taints = (*NON_BLOCKING_TAINTS, *([job.windows_taint.key] if job.windows_taint else []))
        settings = UpstreamSettings(
            kubeconfig=None if job.cluster.type == "in-cluster" else connection.kubeconfig,
            context=connection.context, node_os=self.run.target_os,
            repo_list=self._repo_list_file(), non_blocking_taints=taints, flake_attempts=job.flake_attempts,
            test_timeout=job.test_timeout, kubectl=session.facts.kubectl or None,
        )
        self.say(f"upstream engine: {len(names)} spec(s) of e2e.test with ginkgo --procs={spec.workers}")
        return UpstreamPhase(spec, names, self.toolchain(session.facts.server_version), settings, self.artifacts,
                             self.log, deadline)

    def _repo_list_file(self) -> str | None:
        """The run's repo list as it was read when the run was resolved, for e2e.test (KUBE_TEST_REPO_LIST): a file
        of the build, so e2e.test reads the very list the run resolved (a URL is not fetched again)."""
        if not self.run.job.repo_list:
            return None
        path = self.artifacts / REPO_LIST_FILE
        if not path.exists():
            path.write_text(self.run.repo_list.text, encoding="utf-8")
        return str(path)

    def rows(self, attempts: list[Attempt]) -> list[Attempt]:
        return with_plan_properties(attempts, self._plan)

    def cleanup(self, api: client.ApiClient, timeout: float, other_runs: list[str]) -> list[str]:
        """The placement policy goes; e2e.test deletes its namespaces itself, and what an interrupted or killed
        one left goes here, unless another winsuite run is active on the cluster (e2e.test's namespaces do not
        say which run made them: the last run to end deletes them)."""
        if self.placement_installed:
            placement_policy.remove(api, self.run.run_id)
            self.placement_installed = False
        if self.namespaces_before is None or other_runs:
            return []
        return delete_e2e_namespaces(api, self.namespaces_before, timeout)


def with_plan_properties(attempts: list[Attempt], plan: Plan) -> list[Attempt]:
    """Upstream rows carry what native rows carry: tags, and the plan's items and tier for the spec."""
    rows = []
    for attempt in attempts:
        items = plan.items_of_test(attempt.name)
        known = attempt.properties
        properties = dataclasses.replace(
            known, tags=known.tags or tuple(t.value for t in tags_of_name(attempt.name)),
            plan_items=known.plan_items or tuple(i.id for i in items),
            tier=known.tier or (items[0].tier if items else ""))
        rows.append(dataclasses.replace(attempt, properties=properties))
    return rows
