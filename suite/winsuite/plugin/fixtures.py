"""Fixtures the test cases use: the cluster, a namespace per test, and the target (images + placement)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Generator

import pytest
from kubernetes import client

from winsuite import timeline
from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.naming import Spec
from winsuite.authoring.naming import spec_of
from winsuite.authoring.target import ClusterSession
from winsuite.authoring.target import Target
from winsuite.authoring.targeting import NodeOS
from winsuite.k8s import diagnostics
from winsuite.k8s import namespaces
from winsuite.plugin import session
from winsuite.plugin.flakes import ATTEMPT_KEY
from winsuite.plugin.results_writer import NAMESPACE_PROPERTY
from winsuite.plugin.session import RunSession
from winsuite.policy.run_config import RunConfig
from winsuite.results.prow import diagnostics_dir_name

DIAGNOSTICS_PROPERTY = "winsuite.diagnostics"
PHASE_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


def _windows_build(run: RunConfig, facts: ClusterFacts, spec: Spec) -> str | None:
    """Pin a Windows build only when the cluster mixes builds; prefer nodes that really run containers."""
    windows = [n for n in facts.nodes if n.os == NodeOS.WINDOWS and n.ready and n.windows_build]
    if run.target_os != NodeOS.WINDOWS or len({n.windows_build for n in windows}) < 2:
        return None
    for node in sorted(windows, key=lambda n: n.simulated):
        version = next((v for v in run.images.windows_versions.values()
                        if node.windows_build == v.build or str(node.windows_build).startswith(v.build + ".")), None)
        if version and all(version.name in run.images.image(i).windows for i in spec.images):
            return node.windows_build
    return None


@pytest.fixture(scope="session")
def run_session(pytestconfig: pytest.Config) -> RunSession:
    return session.run_session(pytestconfig)


@pytest.fixture(scope="session")
def cluster(run_session: RunSession) -> ClusterSession:
    """The run's cluster as tests see it: API client, discovered facts, the run's placement and id."""
    return run_session.for_cases


@pytest.fixture(scope="session")
def api(cluster: ClusterSession) -> client.ApiClient:
    return cluster.api


@pytest.fixture
def target(request: pytest.FixtureRequest, run_session: RunSession) -> Target:
    spec = spec_of(request.node)
    if spec is None:
        raise pytest.UsageError("the target fixture is for winsuite tests (declared with Describe.it)")
    run = run_session.run
    placement = run.placement.with_build(_windows_build(run, run_session.facts, spec))
    return Target(run_session.facts, spec, placement, run_session.resolve_image)


@pytest.fixture
def namespace(request: pytest.FixtureRequest, cluster: ClusterSession) -> Generator[str, None, None]:
    """A namespace for this test alone, labelled with the run id; its diagnostics are kept if the test fails."""
    spec = spec_of(request.node)
    full_name = spec.full_name if spec else request.node.name
    name = namespaces.name_for(full_name, secrets.token_hex(3))
    api = cluster.api
    with timeline.span("test: namespace create"):
        namespaces.create(api, name, cluster.run_id, full_name)
    # A retried test starts clean: no diagnostics or namespace left from the previous attempt.
    request.node.user_properties[:] = [p for p in request.node.user_properties
                                       if p[0] not in (DIAGNOSTICS_PROPERTY, NAMESPACE_PROPERTY)]
    request.node.user_properties.append((NAMESPACE_PROPERTY, name))  # where the run looks for its pods
    yield name
    try:
        reports = request.node.stash.get(PHASE_REPORTS, {})
        if any(r.failed for r in reports.values()):
            with timeline.span("test: diagnostics"):
                _collect_diagnostics(request, api, name, full_name)
    finally:
        with timeline.span("test: namespace delete"):
            namespaces.delete(api, name)


def _collect_diagnostics(request: pytest.FixtureRequest, api: client.ApiClient, namespace: str, name: str) -> None:
    """Gathered here, by the process that owns the namespace, before the namespace goes away."""
    output = session.run_config(request.config).output
    if output is None:  # a run without a build directory (plain pytest) keeps none
        return
    destination = output.diagnostics_dir / diagnostics_dir_name(name, request.node.stash.get(ATTEMPT_KEY, 1))
    diagnostics.collect(api, namespace, destination)
    # The row links it relative to the build directory (what the dashboard resolves links against).
    relative = os.path.relpath(destination, output.build_dir)
    request.node.user_properties.append((DIAGNOSTICS_PROPERTY, f"{relative}/"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep each phase's report on the item, so fixture teardown knows whether the test failed."""
    report = yield
    item.stash.setdefault(PHASE_REPORTS, {})[report.when] = report
    return report
