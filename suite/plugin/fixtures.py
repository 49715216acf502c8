"""Fixtures the test cases use: the cluster, a namespace per test, and the target (images + placement)."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import secrets
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from winsuite.authoring.naming import Spec
from winsuite.authoring.naming import spec_of
from winsuite.authoring.targeting import Placement
from winsuite.authoring.targeting import place_pod
from winsuite.cluster.discovery import ClusterFacts
from winsuite.k8s import diagnostics
from winsuite.k8s import namespaces
from winsuite.plugin.flakes import ATTEMPT_KEY
from winsuite.plugin.session import ClusterSession
from winsuite.plugin.session import cluster_session
from winsuite.policy.run_config import RunConfig

DIAGNOSTICS_PROPERTY = "winsuite.diagnostics"
PHASE_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


def diagnostics_dir_name(full_name: str, attempt: int) -> str:
    """A stable, filesystem-safe directory per test (and attempt) under artifacts/."""
    words = re.sub(r"[^A-Za-z0-9]+", "_", re.sub(r"\[[^\]]*\]", "", full_name)).strip("_")[:80]
    digest = hashlib.sha256(full_name.encode()).hexdigest()[:8]
    return f"{words}_{digest}" + (f"_attempt{attempt}" if attempt > 1 else "")


@dataclasses.dataclass(frozen=True)
class Target:
    """What a test needs to be OS-agnostic: images and placement for the run's target OS."""

    run: RunConfig
    facts: ClusterFacts
    spec: Spec
    placement: Placement

    @property
    def os(self) -> str:
        return self.run.target_os

    def image(self, image_id: str, os: str | None = None) -> str:
        """The image reference for this run (or for `os`); the test must declare the image in images=."""
        if image_id not in self.spec.images and image_id != "pause":
            raise AssertionError(f"{self.spec.location}: uses image {image_id!r} without declaring it in images=")
        os = os or self.os
        build = self.placement.windows_build if os == self.os else None
        return self.run.catalog.resolve(image_id, self.run.repo_list, target_os=os, windows_build=build)

    def place(self, obj: dict[str, Any]) -> dict[str, Any]:
        """A Pod or workload manifest placed on the target OS (selector, tolerations, spec.os, runtime class)."""
        return place_pod(obj, self.placement)

    def scheduling_only(self) -> Target:
        """For scheduling/admission tests only: may land on simulated nodes, which run nothing."""
        return dataclasses.replace(self, placement=self.placement.for_scheduling_only())


def _windows_build(run: RunConfig, facts: ClusterFacts, spec: Spec) -> str | None:
    """Pin a Windows build only when the cluster mixes builds; prefer nodes that really run containers."""
    windows = [n for n in facts.nodes if n.os == "windows" and n.ready and n.windows_build]
    if run.target_os != "windows" or len({n.windows_build for n in windows}) < 2:
        return None
    for node in sorted(windows, key=lambda n: n.simulated):
        version = next((v for v in run.catalog.windows_versions.values()
                        if node.windows_build == v.build or str(node.windows_build).startswith(v.build + ".")), None)
        if version and all(version.name in run.catalog.image(i).windows for i in spec.images):
            return node.windows_build
    return None


@pytest.fixture(scope="session")
def cluster(pytestconfig: pytest.Config) -> ClusterSession:
    """The run's cluster: connection, discovered facts and configuration."""
    return cluster_session(pytestconfig)


@pytest.fixture(scope="session")
def api(cluster: ClusterSession) -> client.ApiClient:
    return cluster.connection.api


@pytest.fixture
def target(request: pytest.FixtureRequest, cluster: ClusterSession) -> Target:
    spec = spec_of(request.node)
    if spec is None:
        raise pytest.UsageError("the target fixture is for winsuite tests (declared with Describe.it)")
    placement = cluster.run.placement.with_build(_windows_build(cluster.run, cluster.facts, spec))
    return Target(cluster.run, cluster.facts, spec, placement)


@pytest.fixture
def namespace(request: pytest.FixtureRequest, cluster: ClusterSession) -> Generator[str, None, None]:
    """A namespace for this test alone, labelled with the run id; its diagnostics are kept if the test fails."""
    spec = spec_of(request.node)
    full_name = spec.full_name if spec else request.node.name
    name = namespaces.name_for(full_name, secrets.token_hex(3))
    api = cluster.connection.api
    namespaces.create(api, name, cluster.run.run_id, full_name)
    # A retried test starts clean: no diagnostics property left from the previous attempt.
    request.node.user_properties[:] = [p for p in request.node.user_properties if p[0] != DIAGNOSTICS_PROPERTY]
    yield name
    try:
        reports = request.node.stash.get(PHASE_REPORTS, {})
        if any(r.failed for r in reports.values()):
            _collect_diagnostics(request, api, name, full_name)
    finally:
        namespaces.delete(api, name)


def _collect_diagnostics(request: pytest.FixtureRequest, api: client.ApiClient, namespace: str, name: str) -> None:
    """Gathered here, by the process that owns the namespace, before the namespace goes away."""
    results_dir = request.config.getoption("winsuite_results_dir")
    if not results_dir:
        return
    attempt = request.node.stash.get(ATTEMPT_KEY, 1)
    relative = Path("artifacts") / diagnostics_dir_name(name, attempt)
    diagnostics.collect(api, namespace, Path(results_dir).parent / relative)
    request.node.user_properties.append((DIAGNOSTICS_PROPERTY, f"{relative}/"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep each phase's report on the item, so fixture teardown knows whether the test failed."""
    report = yield
    item.stash.setdefault(PHASE_REPORTS, {})[report.when] = report
    return report
