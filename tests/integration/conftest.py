"""Integration fixtures: one embedded cluster per test session, shared by its pytest-xdist workers, and one kind
cluster (its node image built in the background from the session's start; WINSUITE_KIND_TESTS=0 leaves the kind
tests out), a fresh namespace per test; the groups and order that let the workers share the cluster."""

from __future__ import annotations

import os
import shutil
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from tests.integration.kind_image import BackgroundBuild
from tests.integration.kind_support import KindCluster
from tests.integration.kind_support import embedded_running
from tests.tools import shared_session
from tests.tools.embedded_cluster import EmbeddedCluster
from tests.tools.foreign_cluster import ForeignCluster
from tests.tools.foreign_cluster import binaries
from tests.tools.foreign_cluster import missing_prerequisite
from tests.tools.host_state import HostState
from winsuite.cluster.embedded import LocalCluster
from winsuite.cluster.embedded.config import REAL_NODE_NAME
from winsuite.cluster.embedded.state import load
from winsuite.cluster.kind import KindTarget
from winsuite.cluster.kind import engine as engines
from winsuite.cluster.kind.nodeimage.build import image_labels
from winsuite.cluster.kind.state import load as load_kind
from winsuite.components import kube
from winsuite.components.artifacts import BIN_DIR_ENV
from winsuite.components.artifacts import Group
from winsuite.components.artifacts import bin_dir_from_env
from winsuite.components.artifacts import locate
from winsuite.components.artifacts import select
from winsuite.components.errors import BuildFailed
from winsuite.components.errors import ComponentFailed
from winsuite.components.progress import stderr_reporter
from winsuite.errors import UsageError
from winsuite.inputs.pins import load_pins
from winsuite.k8s import namespaces

READY_TIMEOUT = 180.0
DISRUPTION_FIXTURES = ("disrupted_cluster", "stopped_cluster")  # stop parts of the cluster, or all of it
ALONE_MARK = "runs_alone"
TEARDOWN_FIXTURE = "stopped_cluster"
KIND_FIXTURE = "kind_cluster"
KIND_GROUP = "kind"
KIND_CLUSTER_ENV = "WINSUITE_TEST_KIND_CLUSTER"
DEFAULT_KIND_CLUSTER = "winsuite-kind-test"
KIND_BUILD_TIMEOUT = 3600.0
# The groups that take longest, longest first (`make test`'s time per test file): handed out first.
LONGEST_FIRST = ("test_in_cluster_run", "test_evidence_run", "test_upstream_engine", KIND_GROUP,
                 "test_report_from_run", "test_failing_run_credentials", "test_run_interrupts", "test_concurrent_runs",
                 "test_installed_wheel", "test_evidence_upstream")
OTHERS_TIMEOUT = 3600.0  # how long the disruption tests wait for every other test (a whole session's worth)
NODE_BACK_TIMEOUT = 180.0  # the real node's kubelet going on after a stop: its next Lease renewal makes it Ready


def _missing_prerequisite() -> str | None:
    """The exact thing to provide when the embedded cluster can be neither found nor built."""
    pins = load_pins()
    bin_dir = bin_dir_from_env()
    missing = [a.name for a in select(pins, [Group.CONTROL_PLANE]) if locate(a, bin_dir) is None]
    if missing and shutil.which("go") is None:
        return f"needs Go >= {pins.go} on PATH, or {BIN_DIR_ENV} with {', '.join(missing)}"
    return None


def _kind_prerequisite_missing() -> str | None:
    """What this machine lacks for a kind cluster (a container engine it may use, and debootstrap unless the node
    image is there): a prerequisite to name in a skip. Past it, a kind or engine failure is the test's error."""
    try:
        engine = engines.choose()
    except UsageError as err:
        return str(err)
    if shutil.which("debootstrap") is None and image_labels(engine, load_pins().kind_node_image) is None:
        return ("the kind node image's root file system is made with debootstrap: install the Debian package "
                "debootstrap (`winsuite cluster deps --install`)")
    return None


def _disrupts(item: pytest.Item) -> bool:
    names = getattr(item, "fixturenames", ())
    return any(name in names for name in DISRUPTION_FIXTURES) or item.get_closest_marker(ALONE_MARK) is not None


def _handed_out(item: pytest.Item) -> int:
    """The longest groups first, so that the workers end together (the rest keep their order)."""
    group = KIND_GROUP if KIND_FIXTURE in getattr(item, "fixturenames", ()) else item.path.stem
    return LONGEST_FIRST.index(group) if group in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order and groups for one cluster shared by pytest-xdist workers (`--dist loadgroup --no-loadscope-reorder`:
    groups handed out in this order; see shared_session.GroupScheduling). An integration test file is a group (its
    module fixtures serve it on one worker); the kind tests are one group (one kind cluster, deleted by its teardown
    test after them); the tests that disrupt the shared cluster are one group, last, which waits for every other test
    and then runs them one after another: those that change its nodes first, then those that stop its parts, those
    that take it down last (a stable sort keeps the rest in order)."""
    items.sort(key=lambda item: (_disrupts(item), TEARDOWN_FIXTURE in getattr(item, "fixturenames", ()),
                                 DISRUPTION_FIXTURES[0] in getattr(item, "fixturenames", ()), _handed_out(item)))
    groups: dict[str, str] = {}
    for item in items:
        if _disrupts(item):
            group = shared_session.DISRUPTION_GROUP
        elif KIND_FIXTURE in getattr(item, "fixturenames", ()):
            group = KIND_GROUP
        elif item.path.parent == Path(__file__).parent:
            group = item.path.stem
        else:
            continue
        groups[item.nodeid] = group
    shared_session.write_groups(groups)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A disruption test starts once every other test of the session has finished, in whichever worker ran it."""
    if _disrupts(item):
        others = [other.nodeid for other in item.session.items if not _disrupts(other)]
        try:
            shared_session.wait_until_finished(others, OTHERS_TIMEOUT)
        except TimeoutError as err:
            raise AssertionError(f"{err}: this test disrupts the cluster they share") from None


@pytest.fixture(scope="session")
def cluster() -> EmbeddedCluster:
    """The embedded cluster, shared by the session's workers: the first to get here starts it (or reuses one that
    runs), the others reuse it; the session's main process stops it at the end if the session started it."""
    missing = _missing_prerequisite()
    if missing:
        pytest.skip(missing)
    target = LocalCluster(name=shared_session.cluster_name())
    with shared_session.cluster_start_lock() as started_mark:
        try:
            target.connect()
        except (BuildFailed, ComponentFailed):
            raise
        except UsageError as err:  # a missing toolchain, proxy or package: a prerequisite, not a failure
            pytest.skip(str(err))
        if target.started and started_mark is not None:
            started_mark.touch()
    target.wait_ready(READY_TIMEOUT)
    return EmbeddedCluster(target, target.started or (started_mark is not None and started_mark.exists()))


@pytest.fixture(scope="session")
def kind_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KindCluster]:
    """A kind cluster on winsuite's node image, created once per session (or reused) and deleted if created here;
    the host's state before it was created is kept for the teardown test. The wait, once per session, is the node
    image's background build if it is still going, the cluster's creation, and its readiness (every node Ready and
    cluster DNS with an endpoint)."""
    if shared_session.kind_tests_off():
        pytest.skip(f"the kind tests are off ({shared_session.KIND_TESTS_ENV}=0)")
    missing = _missing_prerequisite() or _kind_prerequisite_missing()
    if missing:
        pytest.skip(missing)
    session_dir = shared_session.directory()
    build = BackgroundBuild.of_session(session_dir)
    if build is not None and session_dir is not None:
        outcome = build.wait(KIND_BUILD_TIMEOUT)
        (session_dir / shared_session.KIND_OUTCOME_FILE).write_text(outcome)
        if build.failed:  # its error, once: making the cluster would only build it again
            raise AssertionError(f"{outcome}\n{build.last_lines()}")
    before, embedded_before = HostState.now(), embedded_running()
    target = KindTarget(name=os.environ.get(KIND_CLUSTER_ENV, DEFAULT_KIND_CLUSTER))
    target.connect()
    try:
        target.wait_ready(READY_TIMEOUT)
        yield KindCluster(target, target.started, before, embedded_before)
    finally:
        if load_kind(target.layout) is not None:  # logs first: deletion removes them
            target.collect_logs(tmp_path_factory.getbasetemp() / "kind-cluster-logs")
        target.close()


@pytest.fixture(scope="session")
def foreign_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForeignCluster]:
    """A cluster winsuite did not make, for tests that reach it only through its kubeconfig: kwokctl's (built into
    winsuite's cache like the other binaries) on the cached control plane, its state in the session's tmp dir, with
    kwok nodes added by `kubectl apply`; always deleted."""
    bin_dir = bin_dir_from_env()
    missing = missing_prerequisite(bin_dir)
    if missing:
        pytest.skip(missing)
    pins = load_pins()
    try:
        bins = binaries(pins, stderr_reporter, bin_dir)
    except BuildFailed:
        raise
    except UsageError as err:  # a missing toolchain or proxy: a prerequisite, not a failure
        pytest.skip(str(err))
    target = ForeignCluster(f"winsuite-foreign-{uuid.uuid4().hex[:6]}", tmp_path_factory.mktemp("foreign-cluster"),
                            bins, pins.kubernetes)
    try:
        target.create()
        yield target
    finally:
        target.delete()


@pytest.fixture
def disrupted_cluster(cluster: EmbeddedCluster) -> EmbeddedCluster:
    """The session's cluster for a test that stops parts of it and starts it again: only one this session
    started (a cluster that was running before is somebody's, and is left alone)."""
    if not cluster.started_by_session:
        pytest.skip(f"cluster {cluster.name} was running before this session; it is not disrupted")
    return cluster


@pytest.fixture
def real_node(cluster: EmbeddedCluster) -> EmbeddedCluster:
    """The cluster, when it has its real Linux node; otherwise the test is skipped with the reason."""
    if not cluster.has_real_node:
        pytest.skip(f"needs the embedded cluster's real Linux node ({cluster.real_node_reason})")
    return cluster


@pytest.fixture(scope="session")
def run_id() -> str:
    return uuid.uuid4().hex[:8]


@pytest.fixture
def namespace(cluster: EmbeddedCluster, run_id: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace of its own for each test, labelled with the run id, deleted without waiting."""
    name = namespaces.name_for(request.node.name, uuid.uuid4().hex[:5])
    namespaces.create(cluster.api, name, run_id, request.node.nodeid)
    kube.wait_service_account(cluster.core, name, timeout=60)
    yield name
    if load(cluster.target.layout) is not None:  # not when a teardown test has stopped the cluster
        namespaces.delete(cluster.api, name)


@pytest.fixture
def stoppable_kubelet(disrupted_cluster: EmbeddedCluster) -> Iterator[int]:
    """The real node's kubelet pid; whatever happens, it runs again and the node is Ready before the next test
    (watched: usually seconds)."""
    process = disrupted_cluster.target.state().process("kubelet")
    assert process is not None
    yield process.pid
    os.kill(process.pid, signal.SIGCONT)
    kube.wait_nodes_ready(client.CoreV1Api(disrupted_cluster.api), [REAL_NODE_NAME], NODE_BACK_TIMEOUT)
