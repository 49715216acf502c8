"""The pytest side of a run's timeline (winsuite.timeline): start-up, collection, and each test's setup, call and
teardown, per process (the phase's controller and every xdist worker). Registered only while the timeline is on."""

from __future__ import annotations

from collections.abc import Generator

import pytest

from winsuite import timeline


def _role(config: pytest.Config) -> str:
    worker = getattr(config, "workerinput", None)
    return f"worker {worker['workerid']}" if worker else "controller"


class Timing:
    def __init__(self, config: pytest.Config) -> None:
        self.role = _role(config)
        timeline.since_process_start("pytest: start and imports", role=self.role)

    @pytest.hookimpl(wrapper=True)
    def pytest_collection(self, session: pytest.Session) -> Generator[None, object, object]:
        with timeline.span("pytest: collection and selection", role=self.role):
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        with timeline.span("test: setup", test=item.nodeid):
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        with timeline.span("test: call", test=item.nodeid):
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        with timeline.span("test: teardown", test=item.nodeid):
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, None, None]:
        with timeline.span("pytest: session finish (results)", role=self.role):
            return (yield)
