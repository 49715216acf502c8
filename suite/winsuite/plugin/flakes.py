"""--flake-attempts: rerun a failed test up to N times in one protocol, reporting every attempt."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from _pytest.runner import runtestprotocol

from winsuite.authoring.naming import spec_of

ATTEMPT_PROPERTY = "winsuite.attempt"
ATTEMPT_KEY = pytest.StashKey[int]()
WILL_RERUN_PROPERTY = "winsuite.will-rerun"


class FlakeAttempts:
    """Like ginkgo's --flake-attempts: a test passes if any attempt passes; every attempt is kept.

    Failed attempts that are retried get outcome "rerun" so pytest does not count them as failures,
    while the results writer records them as failed rows, so TestGrid shows the test as FLAKY.
    """

    def __init__(self, attempts: Callable[[], int]) -> None:
        self._attempts = attempts  # read lazily: the job is resolved only when winsuite tests run

    @property
    def attempts(self) -> int:
        return self._attempts()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
        if self.attempts <= 1 or spec_of(item) is None:
            return None
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        for attempt in range(1, self.attempts + 1):
            item.stash[ATTEMPT_KEY] = attempt
            if attempt > 1:
                item._initrequest()  # type: ignore[attr-defined]  # a fresh fixture request per attempt
            reports = runtestprotocol(item, nextitem=nextitem, log=False)
            retry = any(r.failed for r in reports) and attempt < self.attempts
            for report in reports:
                extra = [(ATTEMPT_PROPERTY, str(attempt))] + ([(WILL_RERUN_PROPERTY, "true")] if retry else [])
                report.user_properties = [*report.user_properties, *extra]
                if retry and report.failed:
                    report.outcome = "rerun"  # type: ignore[assignment]  # pytest-rerunfailures' convention
                item.ihook.pytest_runtest_logreport(report=report)
            if not retry:
                break
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def pytest_report_teststatus(self, report: pytest.TestReport) -> tuple[str, str, str] | None:
        if str(report.outcome) == "rerun":
            return "rerun", "R", "RERUN"
        return None
