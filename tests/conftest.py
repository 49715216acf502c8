"""The project's test sessions: what their main process does for every worker (the session directory, the kind node
image's background build, stopping the embedded cluster the session started), and where their time went, per test
file (`make test`'s budget)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.kind_image import BackgroundBuild
from tests.tools import shared_session
from tests.tools.time_budget import write_budget
from winsuite.cluster.embedded import LocalCluster
from winsuite.cluster.embedded.state import load

KIND_TESTS = Path(__file__).parent / "integration" / "test_kind_cluster.py"
KIND_BUILD = pytest.StashKey[BackgroundBuild]()


def _selects_kind_tests(config: pytest.Config) -> bool:
    """Whether the session's paths take in the kind tests (a `-k`/`-m` that leaves them out only costs a build that
    finds the image up to date, or builds it for a later session)."""
    for arg in config.args:
        path = (config.invocation_params.dir / arg.partition("::")[0]).resolve()
        if path == KIND_TESTS.resolve() or path in KIND_TESTS.resolve().parents:
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    shared_session.start(config)


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """`--dist loadgroup` schedules by the groups the integration tests need to share one cluster."""
    if config.getvalue("dist") == "loadgroup":
        return shared_session.GroupScheduling(config, log)
    return None


def pytest_sessionstart(session: pytest.Session) -> None:
    """A session that will run the kind tests starts their node image's build now, in the background."""
    config = session.config
    session_dir = shared_session.directory()
    if (shared_session.is_main_process(config) and session_dir is not None and not shared_session.kind_tests_off()
            and not config.option.collectonly and _selects_kind_tests(config)):
        config.stash[KIND_BUILD] = BackgroundBuild.start(session_dir)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """Each test recorded as finished once its teardown (and its module's, after its last test) is done."""
    try:
        return (yield)
    finally:
        shared_session.record_finished(item.config, item.nodeid)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """After every worker: the kind build stopped if still going, and the embedded cluster stopped if this session
    started it (its logs kept in the session's base temp directory first)."""
    config = session.config
    if not shared_session.is_main_process(config):
        return
    build = config.stash.get(KIND_BUILD, None)
    if build is not None:
        build.stop()
    session_dir = shared_session.directory()
    if session_dir is None or not (session_dir / shared_session.CLUSTER_STARTED_FILE).exists():
        return
    target = LocalCluster(name=shared_session.cluster_name())
    if load(target.layout) is not None:
        base_temp = Path(str(config._tmp_path_factory.getbasetemp()))  # type: ignore[attr-defined]
        target.collect_logs(base_temp / "embedded-cluster-logs")
        target.down()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if shared_session.in_phase(config):  # a phase of `winsuite run --cases tests/…`
        return
    session_dir = shared_session.directory()
    outcome = session_dir / shared_session.KIND_OUTCOME_FILE if session_dir is not None else None
    if outcome is not None and outcome.exists():  # the kind node image's cost, for the session's record
        terminalreporter.write_line(outcome.read_text().strip())
    write_budget(terminalreporter)


def pytest_unconfigure(config: pytest.Config) -> None:
    shared_session.finish(config)
