"""One test session over pytest-xdist workers that share one embedded cluster.

The session's main process (the xdist controller, or pytest itself without xdist) makes a directory every worker
finds through the environment. In it, each worker records the tests it has finished, which is how the tests that
disrupt the shared cluster (stop its API server or kubelet, take it down, change its nodes) know that every other
test is done: they form one xdist group, last in the session's order, run by one worker in order, after waiting for
the rest. The worker that starts the cluster marks it there, so the main process stops it at the end (after every
worker is done) and the disruption tests know it is the session's own.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
import time
from collections.abc import Collection
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

from winsuite.components.locks import file_lock

SESSION_DIR_ENV = "WINSUITE_TEST_SESSION_DIR"
CLUSTER_ENV = "WINSUITE_TEST_CLUSTER"
DEFAULT_CLUSTER = "winsuite-test"
KIND_TESTS_ENV = "WINSUITE_KIND_TESTS"
KIND_OUTCOME_FILE = "kind-build-outcome"
DISRUPTION_GROUP = "cluster-disruption"
DONE_FILE = "finished-tests"
CLUSTER_STARTED_FILE = "embedded-cluster-started"
GROUPS_FILE = "xdist-groups.json"
WAIT_POLL = 1.0


def cluster_name() -> str:
    """The session's embedded cluster (`WINSUITE_TEST_CLUSTER` names another, e.g. beside a running one)."""
    return os.environ.get(CLUSTER_ENV, DEFAULT_CLUSTER)


def kind_tests_off() -> bool:
    """`WINSUITE_KIND_TESTS=0` leaves the kind tests out (skipped with that reason)."""
    return os.environ.get(KIND_TESTS_ENV) == "0"


def is_main_process(config: pytest.Config) -> bool:
    """The xdist controller, or pytest without xdist; not an xdist worker, and not a `winsuite run` phase."""
    return not hasattr(config, "workerinput") and not config.getoption("winsuite_phase", None)


def in_phase(config: pytest.Config) -> bool:
    """A phase of `winsuite run --cases tests/…`: a session of its own, outside the project's test session."""
    return bool(config.getoption("winsuite_phase", None))


def start(config: pytest.Config) -> None:
    """The session's directory, made by the main process before any worker starts (they inherit the variable)."""
    if is_main_process(config):
        os.environ[SESSION_DIR_ENV] = tempfile.mkdtemp(prefix="winsuite-test-session-")


def directory() -> Path | None:
    value = os.environ.get(SESSION_DIR_ENV)
    return Path(value) if value else None


def finish(config: pytest.Config) -> None:
    session_dir = directory()
    if is_main_process(config) and session_dir is not None:
        shutil.rmtree(session_dir, ignore_errors=True)


def record_finished(config: pytest.Config, nodeid: str) -> None:
    """One line per finished test (an O_APPEND write of a line is whole even with writers in several processes)."""
    session_dir = directory()
    if session_dir is not None and not in_phase(config):
        with (session_dir / DONE_FILE).open("a") as done:
            done.write(nodeid + "\n")


def finished() -> set[str]:
    session_dir = directory()
    if session_dir is None or not (session_dir / DONE_FILE).exists():
        return set()
    return set((session_dir / DONE_FILE).read_text().splitlines())


def wait_until_finished(nodeids: Collection[str], timeout: float) -> None:
    """Block until every test in `nodeids` has finished, in whichever worker ran it."""
    deadline = time.monotonic() + timeout
    while left := set(nodeids) - finished():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(left)} test(s) of the session did not finish within {timeout:.0f}s, "
                               f"e.g. {sorted(left)[0]}")
        time.sleep(WAIT_POLL)


@contextmanager
def cluster_start_lock() -> Iterator[Path | None]:
    """Held while a worker connects to the session's cluster: the one that starts it marks it before the others look.
    Yields the mark's path (None outside a session directory)."""
    session_dir = directory()
    if session_dir is None:
        yield None
        return
    with file_lock(session_dir / "embedded-cluster.lock"):
        yield session_dir / CLUSTER_STARTED_FILE


def write_groups(groups: dict[str, str]) -> None:
    """The xdist group of each test that has one, for the controller's scheduler (every worker writes the same)."""
    session_dir = directory()
    if session_dir is not None:
        partial = session_dir / f"{GROUPS_FILE}.{os.getpid()}"
        partial.write_text(json.dumps(groups))
        partial.replace(session_dir / GROUPS_FILE)


class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
    """`--dist loadgroup` by the groups the workers wrote: a group's tests go to one worker, in order; a test without
    one is a group of its own. (xdist 3.8's own loadgroup marks a group in the node id's old attribute, which pytest 9
    no longer reads, so its groups never form.)"""

    def _split_scope(self, nodeid: str) -> str:
        return self._groups.get(nodeid, nodeid)

    @functools.cached_property
    def _groups(self) -> dict[str, str]:
        """Read once every worker has collected (the scheduler splits scopes only then)."""
        session_dir = directory()
        path = session_dir / GROUPS_FILE if session_dir is not None else None
        return json.loads(path.read_text()) if path is not None and path.exists() else {}
