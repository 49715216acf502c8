"""The release verdict: KEP-116's graduation criterion plus SIG Release's criteria for blocking jobs.

KEP-116: "100 % green/passing conformance tests that are applicable to Windows … adequate, non flaky,
and continuously run". Read over the last N finished runs of every release-blocking job: a test that ran
(passed or failed) in that window is applicable; it must pass in every one of those runs. A test that only
ever skipped there is not part of that job, an excluded one is documented as not applicable.
SIG Release (release-blocking-jobs.md): ≥ 75 % of a week's runs pass, no more than 10 failures in a row,
and three green runs in a row at decision time.
A FAILING test is named as failing on infrastructure (its newest failure's class, reports.flakiness.is_infra_failure)
or on a product or test failure: both keep the verdict from READY, but they call for different people.
"""

from __future__ import annotations

import enum
import itertools
import operator
from collections import Counter
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass

from winsuite_reports.flakiness import flip_flakiness
from winsuite_reports.flakiness import is_infra_failure
from winsuite_reports.model import NO_RESULT
from winsuite_reports.model import Build
from winsuite_reports.model import Cell
from winsuite_reports.model import History
from winsuite_reports.model import Job
from winsuite_reports.model import PlanItem
from winsuite_reports.model import Status

# Plan tiers whose outcome is documented (an exclusion with its reason), not tested green; the plan's
# data calls it "will-never-work", the JUnit tier property "never-works".
NEVER_WORKS = frozenset({"never-works", "will-never-work"})


class RowState(enum.Enum):
    """A test's state over the window, worst first (the order aggregates across jobs)."""

    FAILING = "FAILING"  # its newest result is a failure
    FLAKY = "FLAKY"  # flipped (TestGrid's flip rule) or needed a retry
    RECOVERED = "FAILED, NOW PASSING"  # a hard break inside the window, fixed since
    NOT_CONTINUOUS = "NOT RUN EVERY TIME"
    GREEN = "GREEN"
    SKIPPED = "SKIPPED"
    EXCLUDED = "EXCLUDED"
    NO_RESULT = "NO RESULT"

    # A singleton hashed by identity, in C (Enum's __hash__ is a Python call): every test is ranked by its state.
    __hash__ = object.__hash__

    @property
    def blocks(self) -> bool:
        return self in (RowState.FAILING, RowState.FLAKY, RowState.RECOVERED, RowState.NOT_CONTINUOUS)


RANK = {state: rank for rank, state in enumerate(RowState)}
_CATEGORY_AND_STATE = operator.attrgetter("category", "state")
_BLOCKING = frozenset(state for state in RowState if state.blocks)
_RAN = (Status.PASS, Status.FAIL, Status.FLAKY)
UNTESTED = "UNTESTED"


def _blocks(test: RowReadiness) -> bool:
    return test.state in _BLOCKING


@dataclass(frozen=True)
class Criteria:
    runs: int = 10  # the last N finished runs the KEP criterion reads
    min_pass_rate: float = 0.75
    max_consecutive_failures: int = 10
    min_consecutive_greens: int = 3
    week_days: float = 7.0


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class JobReadiness:
    job: str
    checks: list[Check]


# not frozen: a frozen dataclass's __init__ costs four times as much, and a big tab makes one per row
@dataclass(slots=True)
class RowReadiness:
    row: str
    state: RowState
    detail: str  # e.g. "failed 2 of 10 runs of job-x"
    category: str
    failure_class: str = ""  # of its newest failure, when FAILING ("" when its results name none)
    infra: bool = False  # its newest failure was the infrastructure's, not the product's or the test's


@dataclass(frozen=True)
class ItemReadiness:
    item: PlanItem
    state: str  # a RowState value, or UNTESTED when none of its tests ran
    tests: list[RowReadiness]
    blocks: bool


@dataclass(frozen=True)
class Readiness:
    ready: bool
    reasons: list[str]
    blocking_jobs: list[str]
    assumed_blocking: bool  # no job is marked release-blocking: every job was judged
    jobs: list[JobReadiness]
    tests: list[RowReadiness]
    items: list[ItemReadiness] | None
    categories: dict[str, Counter[RowState]]

    @property
    def blocking_tests(self) -> list[RowReadiness]:
        """The tests that keep the verdict from READY: the first ones, as the blocking states are the worst (a tab can
        have a hundred thousand tests, most of them not blocking)."""
        return list(itertools.takewhile(_blocks, self.tests))


def assess(
    history: History,
    criteria: Criteria,
    plan_items: Sequence[PlanItem] | None = None,
    blocking: Sequence[str] = (),
) -> Readiness:
    jobs = [job for job in history.jobs if job.name in blocking or (not blocking and job.release_blocking)]
    assumed = not jobs and not blocking
    if assumed:
        jobs = list(history.jobs)
    job_results = [_job_readiness(job, criteria) for job in jobs]
    by_state = _aggregate([_row_states(job, criteria) for job in jobs])
    tests = list(itertools.chain.from_iterable(by_state.values()))  # worst first, then by row
    items = _items(plan_items, tests) if plan_items is not None else None
    categories: dict[str, Counter[RowState]] = {}
    for (category, state), count in Counter(map(_CATEGORY_AND_STATE, tests)).items():
        categories.setdefault(category or "(none)", Counter())[state] += count
    reasons = _reasons(jobs, job_results, by_state, items)
    return Readiness(
        ready=not reasons,
        reasons=reasons,
        blocking_jobs=[job.name for job in jobs],
        assumed_blocking=assumed,
        jobs=job_results,
        tests=tests,
        items=items,
        categories=dict(sorted(categories.items())),
    )


def _finished(job: Job) -> list[Build]:
    return [build for build in job.builds if not build.running]


def _job_readiness(job: Job, criteria: Criteria) -> JobReadiness:
    finished = _finished(job)
    passed = [build.overall.status is Status.PASS for build in finished]
    newest = finished[0].started if finished else 0
    week = [
        ok
        for build, ok in zip(finished, passed, strict=True)
        if newest - build.started <= criteria.week_days * 86400
    ]
    greens = next((i for i, ok in enumerate(passed) if not ok), len(passed))
    worst_streak = _longest_failure_streak(week)
    rate = sum(week) / len(week) if week else 0.0
    return JobReadiness(
        job.name,
        [
            Check(
                f"runs continuously: ≥ {criteria.runs} finished runs",
                len(finished) >= criteria.runs,
                f"{len(finished)} finished runs",
            ),
            Check(
                f"≥ {100 * criteria.min_pass_rate:.0f} % of a week's runs pass",
                bool(week) and rate >= criteria.min_pass_rate,
                f"{sum(week)} of {len(week)} runs passed ({100 * rate:.1f} %)",
            ),
            Check(
                f"≤ {criteria.max_consecutive_failures} failed runs in a row",
                worst_streak <= criteria.max_consecutive_failures,
                f"longest failure streak in the week: {worst_streak}",
            ),
            Check(
                f"≥ {criteria.min_consecutive_greens} green runs in a row",
                greens >= criteria.min_consecutive_greens,
                f"latest green streak: {greens}",
            ),
        ],
    )


def _longest_failure_streak(passed: Sequence[bool]) -> int:
    longest = current = 0
    for ok in passed:
        current = 0 if ok else current + 1
        longest = max(longest, current)
    return longest


def _row_states(job: Job, criteria: Criteria) -> dict[str, RowReadiness]:
    builds = _finished(job)[: criteria.runs]
    # The job's newest builds are read from its grid, others build by build.
    newest = len(builds) if all(map(operator.is_, builds, job.builds)) else 0
    columns = [] if newest else [build.cells for build in builds]
    where = f"{len(builds)} runs of {job.name}"
    # Most rows of a big tab have the same cells in the runs read (the one shared passing cell): each exclusion and
    # combination of cells is judged once.
    judged: dict[tuple[object, ...], _Judgement] = {}
    states = {}
    grid = job.every_row_cells() if newest else {}
    runs = job.every_row_runs() if newest else {}

    def read(key: str) -> Sequence[Cell]:
        return grid[key][:newest] if newest else [column.get(key, NO_RESULT) for column in columns]

    for key, info in job.rows.items():
        if newest and (first := runs[key][0])[1] >= newest:  # one cell throughout the runs read: no slice to make
            memo_key: tuple[object, ...] = (info.excluded, id(first[0]))
        else:
            memo_key = (info.excluded, *map(id, read(key)))
        found = judged.get(memo_key)
        if found is None:
            found = judged[memo_key] = _judge(info.excluded, read(key), where)
        states[key] = RowReadiness(key, found[0], found[1], info.category, found[2], found[3])
    return states


# A row's state, detail, newest failure's class and whether that was the infrastructure's.
_Judgement = tuple[RowState, str, str, bool]


def _judge(excluded: str, read: Sequence[Cell], where: str) -> _Judgement:
    """The state of a row with these cells in the runs read (newest first)."""
    cells = [cell for cell in read if cell.status in _RAN]
    ran = [cell.status for cell in cells]
    failures = ran.count(Status.FAIL)
    if excluded:
        state, detail = RowState.EXCLUDED, f"excluded: {excluded}"
    elif not ran:
        state, detail = RowState.SKIPPED, f"did not run in the last {where}"
    elif ran[0] is Status.FAIL:
        return _failing(cells, f"{failures} of the last {where}")
    elif Status.FLAKY in ran or flip_flakiness(ran) > 0:
        flaky = ran.count(Status.FLAKY)
        state, detail = RowState.FLAKY, f"flaky in {flaky}, failed in {failures} of the last {where}"
    elif failures:
        state, detail = RowState.RECOVERED, f"failed in {failures} of the last {where}, passes since"
    elif len(ran) < len(read):
        state, detail = RowState.NOT_CONTINUOUS, f"ran in {len(ran)} of the last {where}"
    else:
        state, detail = RowState.GREEN, f"passed in all of the last {where}"
    return state, detail, "", False


def _failing(cells: Sequence[Cell], of_runs: str) -> _Judgement:
    """A FAILING row (`cells`: its results in the runs read, newest first), its newest failure's class named."""
    streak = next((i for i, cell in enumerate(cells) if cell.status is not Status.FAIL), len(cells))
    newest = cells[0]
    detail = f"failed in the newest {streak} and {of_runs}"
    if newest.failure_class:
        detail += f"; newest failure: {newest.failure_class}" + (f" ({newest.evidence})" if newest.evidence else "")
    return RowState.FAILING, detail, newest.failure_class, is_infra_failure(newest)


def _aggregate(per_job: list[dict[str, RowReadiness]]) -> dict[RowState, list[RowReadiness]]:
    """A test in several blocking jobs takes its worst state; the tests by state (see _by_state)."""
    if len(per_job) == 1:  # one blocking job (most dashboards): its states as they are
        return _by_state(per_job[0].values())
    worst: dict[str, RowReadiness] = {}
    for states in per_job:
        for key, state in states.items():
            if key not in worst or RANK[state.state] < RANK[worst[key].state]:
                worst[key] = state
    return _by_state(worst.values())


def _by_state(tests: Iterable[RowReadiness]) -> dict[RowState, list[RowReadiness]]:
    """Every state, worst first, with its tests by row: sorted by row in C, then grouped by state (a big tab has a
    hundred thousand tests, in a few states: the verdict reads each state's tests without going over them all)."""
    by_state: dict[RowState, list[RowReadiness]] = {state: [] for state in RowState}
    for test in sorted(tests, key=_ROW):
        by_state[test.state].append(test)
    return by_state


_ROW = operator.attrgetter("row")


def _items(plan_items: Sequence[PlanItem], tests: list[RowReadiness]) -> list[ItemReadiness]:
    by_row = {test.row: test for test in tests}
    items = []
    for item in plan_items:
        rows = [
            by_row.get(name) or RowReadiness(name, RowState.NO_RESULT, "no result", "") for name in item.tests
        ]
        ran = [row for row in rows if row.state.blocks or row.state is RowState.GREEN]
        state = min(ran, key=lambda row: RANK[row.state]).state.value if ran else UNTESTED
        blocks = any(row.state.blocks for row in ran) or (state == UNTESTED and item.tier not in NEVER_WORKS)
        items.append(ItemReadiness(item, state, rows, blocks))
    return items


def _reasons(
    jobs: list[Job],
    job_results: list[JobReadiness],
    by_state: dict[RowState, list[RowReadiness]],
    items: list[ItemReadiness] | None,
) -> list[str]:
    if not jobs:
        return ["none of the jobs named as release-blocking has results"]
    reasons = [
        f"{result.job}: {check.name} — {check.detail}"
        for result in job_results
        for check in result.checks
        if not check.ok
    ]
    failing = by_state[RowState.FAILING]
    for cause in _FailureCause:
        rows = [test.row for test in failing if _FailureCause.of(test) is cause]
        if rows:
            reasons.append(f"{_count(rows, 'applicable test')} {RowState.FAILING.value}{cause.value}: {_some(rows)}")
    for state in (RowState.FLAKY, RowState.RECOVERED, RowState.NOT_CONTINUOUS):
        rows = [test.row for test in by_state[state]]
        if rows:
            reasons.append(f"{_count(rows, 'applicable test')} {state.value}: {_some(rows)}")
    if not any(tests for state, tests in by_state.items() if state is RowState.GREEN or state.blocks):
        reasons.append("no applicable test ran in the blocking jobs")
    untested = [item.item.id for item in items or [] if item.blocks and item.state == UNTESTED]
    if untested:
        reasons.append(f"{_count(untested, 'plan item')} without a test that ran: {_some(untested)}")
    return reasons


class _FailureCause(enum.Enum):
    """What the verdict says a FAILING test failed on (the words follow FAILING)."""

    PRODUCT_OR_TEST = " on a product or test failure"
    INFRASTRUCTURE = " on infrastructure (not the product)"
    NOT_CLASSIFIED = ""  # its results name no class (upstream artifacts, older runs)

    @staticmethod
    def of(test: RowReadiness) -> _FailureCause:
        if test.infra:
            return _FailureCause.INFRASTRUCTURE
        return _FailureCause.PRODUCT_OR_TEST if test.failure_class else _FailureCause.NOT_CLASSIFIED


def _count(names: Sequence[str], noun: str) -> str:
    return f"{len(names)} {noun}{'' if len(names) == 1 else 's'}"


def _some(names: Sequence[str], shown: int = 3) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")
