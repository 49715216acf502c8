"""Integration fixtures: one embedded cluster and one kind cluster per test session (the kind one's node image built
in the background from the session's start; WINSUITE_KIND_TESTS=0 leaves the kind tests out), a fresh namespace per
test."""

from __future__ import annotations

import os
import shutil
import signal
import time
import uuid
from collections.abc import Iterator

import pytest
from kubernetes import client

from tests.integration.kind_image import BackgroundBuild
from tests.integration.kind_support import KindCluster
from tests.integration.kind_support import embedded_running
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
from winsuite.cluster.kind.paths import kind_dir
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

CLUSTER_ENV = "WINSUITE_TEST_CLUSTER"
DEFAULT_CLUSTER = "winsuite-test"
READY_TIMEOUT = 180.0
DISRUPTION_FIXTURE = "disrupted_cluster"  # stops parts of the cluster and starts it again
TEARDOWN_FIXTURE = "stopped_cluster"
KIND_TEARDOWN_FIXTURE = "deleted_kind_cluster"
KIND_CLUSTER_ENV = "WINSUITE_TEST_KIND_CLUSTER"
DEFAULT_KIND_CLUSTER = "winsuite-kind-test"
KIND_TESTS_ENV = "WINSUITE_KIND_TESTS"
KIND_FIXTURE = "kind_cluster"
KIND_BUILD_TIMEOUT = 3600.0
KIND_BUILD = pytest.StashKey[BackgroundBuild]()
KIND_BUILD_OUTCOME = pytest.StashKey[str]()


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


def kind_tests_off() -> bool:
    return os.environ.get(KIND_TESTS_ENV) == "0"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The kind tests run after the others, so that their node image has the longest time to build in the
    background, and the kind cluster is deleted right after them: a kind node's network namespaces and CNI state
    share host directories with the embedded cluster's, which its disruption and teardown tests then check alone.
    Then the tests that disrupt the session cluster; the ones that take it down run last (a stable sort keeps the
    rest in order)."""
    order = {KIND_FIXTURE: 1, KIND_TEARDOWN_FIXTURE: 2, DISRUPTION_FIXTURE: 3, TEARDOWN_FIXTURE: 4}
    items.sort(key=lambda item: max((order.get(name, 0) for name in getattr(item, "fixturenames", ())), default=0))


def pytest_collection_finish(session: pytest.Session) -> None:
    """A session with kind tests starts their node image's build now, in the background."""
    if kind_tests_off() or session.config.option.collectonly:
        return
    if any(KIND_FIXTURE in getattr(item, "fixturenames", ()) for item in session.items):
        log = kind_dir() / "logs" / f"test-session-build-{os.getpid()}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        session.config.stash[KIND_BUILD] = BackgroundBuild(log)


def pytest_sessionfinish(session: pytest.Session) -> None:
    build = session.config.stash.get(KIND_BUILD, None)
    if build is not None:
        build.stop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """The kind node image's cost, for the session's record (CI's cold and warm figures)."""
    outcome = config.stash.get(KIND_BUILD_OUTCOME, None)
    if outcome is not None:
        terminalreporter.write_line(outcome)


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedCluster]:
    """The embedded cluster, started once per session (or reused when running) and stopped if started here."""
    missing = _missing_prerequisite()
    if missing:
        pytest.skip(missing)
    target = LocalCluster(name=os.environ.get(CLUSTER_ENV, DEFAULT_CLUSTER))
    try:
        target.connect()
    except (BuildFailed, ComponentFailed):
        raise
    except UsageError as err:  # a missing toolchain, proxy or package: a prerequisite, not a failure
        pytest.skip(str(err))
    try:
        target.wait_ready(READY_TIMEOUT)
        yield EmbeddedCluster(target, target.started)
    finally:
        if load(target.layout) is not None:  # logs first: teardown removes them
            target.collect_logs(tmp_path_factory.getbasetemp() / "embedded-cluster-logs")
        target.close()


@pytest.fixture(scope="session")
def kind_cluster(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[KindCluster]:
    """A kind cluster on winsuite's node image, created once per session (or reused) and deleted if created here;
    the host's state before it was created is kept for the teardown test."""
    if kind_tests_off():
        pytest.skip(f"the kind tests are off ({KIND_TESTS_ENV}=0)")
    missing = _missing_prerequisite() or _kind_prerequisite_missing()
    if missing:
        pytest.skip(missing)
    build = pytestconfig.stash.get(KIND_BUILD, None)
    if build is not None:
        outcome = pytestconfig.stash[KIND_BUILD_OUTCOME] = build.wait(KIND_BUILD_TIMEOUT)
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
    """The real node's kubelet pid; whatever happens, it runs again and the node is Ready before the next test."""
    process = disrupted_cluster.target.state().process("kubelet")
    assert process is not None
    yield process.pid
    os.kill(process.pid, signal.SIGCONT)
    core = client.CoreV1Api(disrupted_cluster.api)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        conditions = core.read_node(REAL_NODE_NAME).status.conditions or []
        if any(c.type == "Ready" and c.status == "True" for c in conditions):
            return
        time.sleep(2)
    raise AssertionError(f"{REAL_NODE_NAME} did not become Ready again after its kubelet went on")
