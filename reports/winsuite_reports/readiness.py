"""The release verdict: KEP-116's graduation criterion plus SIG Release's criteria for blocking jobs.

KEP-116: "100 % green/passing conformance tests that are applicable to Windows … adequate, non flaky,
and continuously run". Read over the last N finished runs of every release-blocking job: a test that ran
(passed or failed) in that window is applicable; it must pass in every one of those runs. A test that only
ever skipped there is not part of that job, an excluded one is documented as not applicable.
SIG Release (release-blocking-jobs.md, reports.release_jobs): ≥ 75 % of a week's runs pass, no more than 10
failures in a row, and three green runs in a row at decision time.
A FAILING test is named as failing on infrastructure (its newest failure's class,
winsuite_reports.evidence.is_infra_failure) or on a product or test failure: both keep the verdict from READY, but
they call for different people.
The engines' cross-checks (--engine both) are winsuite's self-checks, no tests of the product: the verdict leaves them
out, and says beside it how many agreed.
"""

from __future__ import annotations

import enum
import itertools
import operator
from collections import Counter
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from functools import cached_property

from winsuite_reports.conventions import cross_check_rows
from winsuite_reports.cross_checks import CrossChecks
from winsuite_reports.cross_checks import check_counts
from winsuite_reports.cross_checks import tally
from winsuite_reports.evidence import is_infra_failure
from winsuite_reports.flakiness import flip_flakiness
from winsuite_reports.job import History
from winsuite_reports.job import Job
from winsuite_reports.job import cells_of
from winsuite_reports.model import NO_RESULT
from winsuite_reports.model import Cell
from winsuite_reports.model import PlanItem
from winsuite_reports.model import RowInfo
from winsuite_reports.model import Status
from winsuite_reports.model import by_key
from winsuite_reports.release_jobs import Criteria
from winsuite_reports.release_jobs import JobReadiness
from winsuite_reports.release_jobs import finished
from winsuite_reports.release_jobs import job_readiness

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
_BLOCKING = frozenset(state for state in RowState if state.blocks)  # a set lookup, in C: a big tab's every judgement
_EXCLUDED, _CATEGORY, _STATUS = (operator.attrgetter(name) for name in ("excluded", "category", "status"))
_RAN = (Status.PASS, Status.FAIL, Status.FLAKY)
UNTESTED = "UNTESTED"


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
class RowStates:
    """Every row's state in the runs read, judged once per distinct cells there (a big tab's hundred thousand rows
    are mostly the one passing cell); a row's RowReadiness is made only when asked for."""

    rows: dict[str, RowInfo]  # by key
    keys: list[str]  # the rows' keys, in order: a few rows are read by position
    tokens: list[object]  # per row, in order: what its cells in the runs read are known by
    judged: dict[object, _Judgement]  # token -> the state of a row with those cells, unless it is excluded

    def judgement(self, info: RowInfo, token: object) -> _Judgement:
        if info.excluded:
            return RowState.EXCLUDED, f"excluded: {info.excluded}", "", False
        return self.judged[token]

    def every(self) -> list[RowReadiness]:
        """Every row's, by row."""
        rows = zip(self.rows.items(), self.tokens, strict=True)
        return [self._readiness(key, info, token) for (key, info), token in rows]

    def blocking(self) -> list[RowReadiness]:
        """The rows in a blocking state, by row: only the rows of a blocking judgement are looked at."""
        blocks = {token for token, judgement in self.judged.items() if judgement[0] in _BLOCKING}
        if not blocks:
            return []
        found = itertools.compress(enumerate(self.tokens), map(blocks.__contains__, self.tokens))
        tests = (self._readiness(self.keys[index], self.rows[self.keys[index]], token) for index, token in found)
        return [test for test in tests if test.state in _BLOCKING]

    def counts(self) -> Counter[tuple[str, RowState]]:
        """How many rows of each category are in each state (counted by C-level maps: a row is in one of a few)."""
        state_of = {token: judgement[0] for token, judgement in self.judged.items()}
        counts: Counter[tuple[str, RowState]] = Counter()
        infos = self.rows.values()
        states = map(state_of.__getitem__, self.tokens)
        facts = Counter(zip(map(_EXCLUDED, infos), map(_CATEGORY, infos), states, strict=True))
        for (excluded, category, state), count in facts.items():
            counts[category, RowState.EXCLUDED if excluded else state] += count
        return counts

    def _readiness(self, key: str, info: RowInfo, token: object) -> RowReadiness:
        state, detail, failure_class, infra = self.judgement(info, token)
        return RowReadiness(key, state, detail, info.category, failure_class, infra)


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
    items: list[ItemReadiness] | None
    categories: dict[str, Counter[RowState]]
    # The tests that keep the verdict from READY, worst first, then by row (a big tab has a hundred thousand tests,
    # most of them not blocking).
    blocking_tests: list[RowReadiness]
    states: RowStates = field(repr=False)  # every test's state (see tests)
    # The engines' cross-checks in the runs read: winsuite's self-checks, shown beside the verdict and never part of it
    cross_checks: CrossChecks

    @cached_property
    def tests(self) -> list[RowReadiness]:
        """Every test, worst first, then by row (made on first use: no page lists them all)."""
        by_state = _by_state(self.states.every())
        return list(itertools.chain.from_iterable(by_state.values()))


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
    job_results = [job_readiness(job, criteria) for job in jobs]
    checks = tally(itertools.chain.from_iterable(_cross_checks_read(job, criteria) for job in jobs))
    states = _aggregate([_row_states(job, criteria) for job in jobs])
    blocking_tests = list(itertools.chain.from_iterable(_by_state(states.blocking()).values()))
    items = _items(plan_items, states) if plan_items is not None else None
    categories: dict[str, Counter[RowState]] = {}
    for (category, state), count in states.counts().items():
        categories.setdefault(category or "(none)", Counter())[state] += count
    reasons = _reasons(jobs, job_results, blocking_tests, categories, items)
    return Readiness(
        ready=not reasons,
        reasons=reasons,
        blocking_jobs=[job.name for job in jobs],
        assumed_blocking=assumed,
        jobs=job_results,
        items=items,
        categories=dict(sorted(categories.items())),
        blocking_tests=blocking_tests,
        states=states,
        cross_checks=checks,
    )


def _cross_checks_read(job: Job, criteria: Criteria) -> list[Counter[Status]]:
    """The cross-check cells' statuses of each run the verdict reads."""
    read = {id(build) for build in finished(job)[: criteria.runs]}
    return [checks for build, checks in zip(job.builds, check_counts(job), strict=True) if id(build) in read]


def _row_states(job: Job, criteria: Criteria) -> RowStates:
    builds = finished(job)[: criteria.runs]
    # The job's newest builds are read from its runs, others build by build.
    newest = len(builds) if all(map(operator.is_, builds, job.builds)) else 0
    where = f"{len(builds)} runs of {job.name}"
    # The engines' cross-checks are winsuite's self-checks, no test of the product: the verdict judges the others.
    checks = set(cross_check_rows(job.rows))
    rows = {key: info for key, info in job.rows.items() if key not in checks} if checks else job.rows
    keys = list(rows)
    # Rows whose cells in the runs read are alike (the one passing cell, mostly) are judged once.
    by_alike: dict[tuple[object, ...], _Judgement] = {}

    def judge(read: Sequence[Cell]) -> _Judgement:
        alike = _alike(read)
        if alike not in by_alike:
            by_alike[alike] = _judge(read, where)
        return by_alike[alike]

    judged: dict[object, _Judgement] = {}
    if newest:
        # Rows that share a runs list (a one-build tab's rows of one cell) are judged once, by the list's id; a row
        # that is one cell throughout the runs read, once per cell (a long history's passing rows).
        runs = list(_in_row_order(job.every_row_runs(), keys))
        tokens: list[object] = list(map(id, runs))
        by_cell: dict[int, _Judgement] = {}
        for token, row_runs in dict(zip(tokens, runs, strict=True)).items():
            cell, length = row_runs[0]
            if length < newest:
                judged[token] = judge(_head(row_runs, newest))
            elif id(cell) in by_cell:
                judged[token] = by_cell[id(cell)]
            else:
                judged[token] = by_cell[id(cell)] = judge([cell] * newest)
    else:
        columns = [build.cells for build in builds]
        tokens = list(keys)  # each row judged on its own, known by its key
        for key in keys:
            judged[key] = judge([column.get(key, NO_RESULT) for column in columns])
    return RowStates(rows, keys, tokens, judged)


def _in_row_order(runs: dict[str, list[tuple[Cell, int]]], keys: list[str]) -> Iterable[list[tuple[Cell, int]]]:
    """Each row's runs, in the order of `keys`: as they are when they were made in that order (most often), without a
    lookup per row."""
    return runs.values() if list(runs) == keys else map(runs.__getitem__, keys)


def _head(runs: list[tuple[Cell, int]], newest: int) -> list[Cell]:
    """The row's cells in the `newest` builds, from its runs."""
    return list(itertools.islice(cells_of(runs), newest))


def _alike(read: Sequence[Cell]) -> tuple[object, ...]:
    """What _judge reads of a row's cells: their statuses, and when the newest one that ran failed, its class, its
    evidence and whether it was the infrastructure's."""
    statuses = tuple(map(_STATUS, read))
    if Status.FAIL not in statuses:
        return statuses
    newest = next(cell for cell in read if cell.status in _RAN)
    if newest.status is not Status.FAIL:
        return statuses
    return statuses, newest.failure_class, newest.evidence, is_infra_failure(newest)


# A row's state, detail, newest failure's class and whether that was the infrastructure's.
_Judgement = tuple[RowState, str, str, bool]


def _judge(read: Sequence[Cell], where: str) -> _Judgement:
    """The state of a row with these cells in the runs read (newest first), unless it is excluded."""
    cells = [cell for cell in read if cell.status in _RAN]
    ran = [cell.status for cell in cells]
    failures = ran.count(Status.FAIL)
    if not ran:
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


def _aggregate(per_job: list[RowStates]) -> RowStates:
    """A test in several blocking jobs takes its worst state (the first job's among equals)."""
    if len(per_job) == 1:  # one blocking job (most dashboards): its states as they are
        return per_job[0]
    worst: dict[str, tuple[RowInfo, tuple[int, object], _Judgement]] = {}
    for index, states in enumerate(per_job):
        for (key, info), token in zip(states.rows.items(), states.tokens, strict=True):
            judgement = states.judgement(info, token)
            if key not in worst or RANK[judgement[0]] < RANK[worst[key][2][0]]:
                worst[key] = (info, (index, token), judgement)
    ordered = by_key(worst)
    judged: dict[object, _Judgement] = {token: per_job[token[0]].judged[token[1]] for _, token, _ in ordered.values()}
    return RowStates({key: info for key, (info, _, _) in ordered.items()}, list(ordered),
                     [token for _, token, _ in ordered.values()], judged)


def _by_state(tests: Iterable[RowReadiness]) -> dict[RowState, list[RowReadiness]]:
    """Every state, worst first, with its tests in the order given (by row)."""
    by_state: dict[RowState, list[RowReadiness]] = {state: [] for state in RowState}
    for test in tests:
        by_state[test.state].append(test)
    return by_state


def _items(plan_items: Sequence[PlanItem], states: RowStates) -> list[ItemReadiness]:
    by_row = {test.row: test for test in states.every()}
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
    blocking_tests: list[RowReadiness],
    categories: dict[str, Counter[RowState]],
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
    by_state = _by_state(blocking_tests)
    for cause in _FailureCause:
        rows = [test.row for test in by_state[RowState.FAILING] if _FailureCause.of(test) is cause]
        if rows:
            reasons.append(f"{_count(rows, 'applicable test')} {RowState.FAILING.value}{cause.value}: {_some(rows)}")
    for state in (RowState.FLAKY, RowState.RECOVERED, RowState.NOT_CONTINUOUS):
        rows = [test.row for test in by_state[state]]
        if rows:
            reasons.append(f"{_count(rows, 'applicable test')} {state.value}: {_some(rows)}")
    if not blocking_tests and not any(counts[RowState.GREEN] for counts in categories.values()):
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
