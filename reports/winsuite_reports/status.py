"""A tab's status as TestGrid's summarizer computes it: alerts, BROKEN > STALE > FAILING > FLAKY > PASSING."""

from __future__ import annotations

import enum
import itertools
import operator
from collections import Counter
from collections.abc import Iterable
from collections.abc import Set
from dataclasses import dataclass
from dataclasses import replace

from winsuite_reports.conventions import cross_check_rows
from winsuite_reports.cross_checks import check_counts
from winsuite_reports.job import Job
from winsuite_reports.job import cells_of
from winsuite_reports.model import Build
from winsuite_reports.model import Cell
from winsuite_reports.model import Status

OVERALL = "Overall"


@dataclass(frozen=True)
class Thresholds:
    """TestGrid's tab options, with the Kubernetes defaults (config/testgrids/default.yaml)."""

    num_columns_recent: int = 10
    num_failures_to_alert: int = 3  # 0 = never alert
    num_passes_to_disable_alert: int = 1
    stale_hours: float = 0  # alert_stale_results_hours; 0 = no staleness
    broken_column_threshold: float = 0  # fraction of failed cells in one column; 0 = off


class TabStatus(enum.Enum):
    PASSING = "PASSING"
    FLAKY = "FLAKY"
    FAILING = "FAILING"
    STALE = "STALE"
    BROKEN = "BROKEN"
    UNKNOWN = "UNKNOWN"


def _coalesce(status: Status, ignore_running: bool) -> Status:
    if status is Status.NO_RESULT or (status is Status.RUNNING and ignore_running):
        return Status.NO_RESULT
    if status in (Status.FAIL, Status.RUNNING):
        return Status.FAIL
    if status is Status.FLAKY:
        return status
    return Status.PASS


# Looked up once per cell of every analysis, so computed once here.
_COALESCED = {(status, ignore): _coalesce(status, ignore) for status in Status for ignore in (False, True)}


def coalesce(status: Status, *, ignore_running: bool) -> Status:
    """TestGrid's result.Coalesce: reduce to PASS, FAIL, FLAKY or NO_RESULT."""
    return _COALESCED[status, ignore_running]


@dataclass(frozen=True)
class Alert:
    """An open alert on one row: at least num_failures_to_alert consecutive failures."""

    row: str
    fail_count: int
    first_fail: str  # oldest failing build of the outage
    latest_fail: str
    last_pass: str  # newest pass before the outage, "" when none in the history
    message: str


def row_alert(row: str, columns: Iterable[tuple[str, Cell]], thresholds: Thresholds) -> Alert | None:
    """TestGrid's alertRow (pkg/updater/updater.go), walking the row's (build id, cell) pairs newest first.

    An outage opens at num_failures_to_alert consecutive failures before num_passes_to_disable_alert passes. A
    flaky cell restarts the consecutive count but not the outage: its failures all count, and the newest of them
    is the build named as failing last (fail, flaky, fail, fail, fail, pass: 4 failures, the newest build named).
    """
    to_open, to_close = thresholds.num_failures_to_alert, thresholds.num_passes_to_disable_alert
    if to_open == 0:
        return None
    consecutive = passes = failures = 0
    first_fail = latest_fail = last_pass = ""
    message = ""
    for build_id, cell in columns:
        status = coalesce(cell.status, ignore_running=True)
        if status is Status.PASS:
            passes += 1
            if consecutive >= to_open:
                last_pass = last_pass or build_id  # the newest pass before the outage
                if passes >= to_close:
                    break
            elif passes >= to_close:
                return None
            else:
                consecutive = 0
        elif status is Status.FAIL:
            passes = 0
            last_pass = ""
            consecutive += 1
            failures += 1
            if failures == 1:
                latest_fail, message = build_id, cell.message
            first_fail = build_id
        elif status is Status.FLAKY:
            passes = 0
            if consecutive >= to_open:
                break  # cannot say which build is at fault
            consecutive = 0
    if consecutive < to_open:
        return None
    return Alert(row, failures, first_fail, latest_fail, last_pass, message)


@dataclass(frozen=True)
class TabSummary:
    """What the index shows for one tab."""

    status: TabStatus
    reason: str
    alerts: list[Alert]
    passing_columns: int
    completed_columns: int
    passing_cells: int  # passed cells; skipped ones are counted apart (TestGrid's PASS_WITH_SKIPS)
    filled_cells: int  # cells that passed, failed or flaked
    skipped_cells: int
    latest_green: str  # build id, "" when no recent greens
    last_run: int  # epoch seconds of the newest build's start, 0 when none

    @property
    def pass_rate(self) -> float | None:
        """Share of recent (non-running) columns that passed, as the index's pass rate."""
        return self.passing_columns / self.completed_columns if self.completed_columns else None

    @property
    def stats(self) -> str:
        """TestGrid's status line."""
        if not self.completed_columns:
            return "no completed results"
        columns = (f"{self.passing_columns} of {self.completed_columns} "
                   f"({100 * self.passing_columns / self.completed_columns:.1f}%) recent columns passed")
        skipped = f", {self.skipped_cells} skipped" if self.skipped_cells else ""
        if not self.filled_cells:
            return f"{columns} (no cell ran{skipped})"
        return (f"{columns} ({self.passing_cells} of {self.filled_cells} or "
                f"{100 * self.passing_cells / self.filled_cells:.1f}% cells{skipped})")


def column_statuses(build: Build, *, ignore_running: bool) -> Counter[Status]:
    """How many cells of a column have each status, coalesced, the Overall row included (TestGrid treats it as a
    row like any other)."""
    counts = Counter({coalesce(build.overall.status, ignore_running=ignore_running): 1})
    for status, n in build.counts.items():
        counts[coalesce(status, ignore_running=ignore_running)] += n
    return counts


def rows_without_recent_results(job: Job, recent: int) -> list[str]:
    """Rows with no result in the newest `recent` columns: TestGrid's summarizer leaves them out (recentRows)."""
    if not job.builds:
        return list(job.rows)
    counts = job.builds[0].counts
    if sum(counts.values()) == len(job.rows) and not counts.get(Status.NO_RESULT):
        return []  # the newest build has a result in every row (its cells are rows, as many as there are): most tabs
    runs = job.every_row_runs()
    # Most rows have a result in the newest build: each row's newest status looked at by C-level maps (a big tab has
    # a hundred thousand rows).
    newest = map(_STATUS, map(_FIRST, map(_FIRST, map(runs.__getitem__, job.rows))))
    unsure = list(itertools.compress(job.rows, map(operator.is_, newest, itertools.repeat(Status.NO_RESULT))))
    return [key for key in unsure if _no_result_in(runs[key], recent)]


def _no_result_in(runs: list[tuple[Cell, int]], recent: int) -> bool:
    """Whether the first `recent` cells of a row's runs are all NO_RESULT."""
    seen = 0
    for cell, length in runs:
        if seen >= recent:
            break
        if cell.status is not Status.NO_RESULT:
            return False
        seen += length
    return True


_FIRST, _STATUS = operator.itemgetter(0), operator.attrgetter("status")


@dataclass(frozen=True)
class _Columns:
    """A tab's columns as the summarizer reads them: each column's coalesced counts, without the rows it drops and
    without the engines' cross-checks (winsuite's self-checks: no test of the product, so no cell its pass rates
    count; they still alert as rows)."""

    job: Job
    dropped: list[str]  # the rows without a recent result, but for cross-checks (counted apart already)
    checks: list[Counter[Status]]  # per column: its cross-check cells' statuses (cross_checks.check_counts)

    def statuses(self, index: int, *, ignore_running: bool) -> Counter[Status]:
        counts = column_statuses(self.job.builds[index], ignore_running=ignore_running)
        for status, n in self.checks[index].items():
            counts[coalesce(status, ignore_running=ignore_running)] -= n
        for key in self.dropped:
            cell = self.job.cells(key)[index]
            if cell.status is not Status.NO_RESULT:  # a missing cell was never counted
                counts[coalesce(cell.status, ignore_running=ignore_running)] -= 1
        return counts

    def running(self, index: int) -> bool:
        build = self.job.builds[index]
        return build.running or bool(build.counts.get(Status.RUNNING))


def summarize(job: Job, thresholds: Thresholds, now: float) -> TabSummary:
    """The tab's summary as TestGrid's summarizer makes it (pkg/summarizer/summary.go), except that skipped cells
    are counted apart from passed ones in the status line, and cross-check cells not at all."""
    recent = thresholds.num_columns_recent
    dropped = set(rows_without_recent_results(job, recent))
    checks = set(cross_check_rows(job.rows))
    columns = _Columns(job, [key for key in dropped if key not in checks], check_counts(job))
    alerts = job_alerts(job, thresholds, skip=dropped)
    passing_columns = completed_columns = passing_cells = filled_cells = skipped_cells = 0
    worst_column: tuple[float, str] = (0.0, "")
    # gridMetrics: the newest `recent` columns, running ones included (their running cells are no result).
    for index, build in enumerate(job.builds[:recent]):
        statuses = columns.statuses(index, ignore_running=True)
        passes, failures, flakes = statuses[Status.PASS], statuses[Status.FAIL], statuses[Status.FLAKY]
        # A skipped cell keeps a column green, as in TestGrid, but it is no passed test.
        skips = build.counts.get(Status.SKIP, 0) - columns.checks[index][Status.SKIP] + (
            build.overall.status is Status.SKIP)
        passing_cells, filled_cells = passing_cells + passes - skips, filled_cells + passes + failures + flakes - skips
        skipped_cells += skips
        completed_columns += passes + failures + flakes > 0
        passing_columns += failures == 0 and passes > 0
        if passes + failures:
            worst_column = max(worst_column, (failures / (passes + failures + flakes), build.id))
    flaky, found = _recent_failures(columns, recent)
    status, reason = _status(job, thresholds, now, alerts, worst_column, flaky=flaky, found=found)
    return TabSummary(
        status=status,
        reason=reason,
        alerts=alerts,
        passing_columns=passing_columns,
        completed_columns=completed_columns,
        passing_cells=passing_cells,
        filled_cells=filled_cells,
        skipped_cells=skipped_cells,
        latest_green=_latest_green(columns),
        last_run=job.builds[0].started if job.builds else 0,
    )


def _recent_failures(columns: _Columns, recent: int) -> tuple[bool, bool]:
    """TestGrid's overallStatus walk over the newest `recent` finished columns that have a passing cell: whether
    any cell there is not passing (FLAKY, or FAILING when an alert is open), and whether a column passed."""
    flaky = found = False
    for index in range(len(columns.job.builds)):
        if recent <= 0:
            break
        statuses = columns.statuses(index, ignore_running=True)
        flaky = flaky or statuses.total() > statuses[Status.PASS] + statuses[Status.NO_RESULT]
        if columns.running(index):
            continue  # not recent until it finishes
        if flaky:
            return True, found
        if statuses[Status.PASS]:
            found = True
            recent -= 1
    return False, found


_UNSEEN = Alert("", 0, "", "", "", "")  # no row that is one cell throughout has shown its alert yet


def job_alerts(job: Job, thresholds: Thresholds, *, skip: Set[str] = frozenset()) -> list[Alert]:
    """Open alerts, the Overall row first; rows in `skip` (no recent result) left out, as TestGrid does."""
    overall = row_alert(OVERALL, ((b.id, b.overall) for b in job.builds), thresholds)
    alerts = [overall] if overall else []
    if len(job.builds) < thresholds.num_failures_to_alert:  # too few columns for any row to fail often enough
        return alerts
    # A row that is one cell throughout (most rows of a big tab) alerts as every other such row does: walked once
    # per cell.
    one_cell: dict[int, Alert | None] = {}
    every_runs = job.every_row_runs()
    for key in job.rows:
        if key in skip:
            continue
        runs = every_runs[key]
        if len(runs) == 1 and (alert := one_cell.get(id(runs[0][0]), _UNSEEN)) is not _UNSEEN:
            alert = replace(alert, row=key) if alert else None
        else:
            # Lazily: most rows settle at their newest pass, long before the oldest build.
            alert = row_alert(key, zip((b.id for b in job.builds), cells_of(runs), strict=True), thresholds)
            if len(runs) == 1:
                one_cell[id(runs[0][0])] = alert
        if alert:
            alerts.append(alert)
    return alerts


def _status(
    job: Job,
    thresholds: Thresholds,
    now: float,
    alerts: list[Alert],
    worst_column: tuple[float, str],
    *,
    flaky: bool,
    found: bool,
) -> tuple[TabStatus, str]:
    ratio, column = worst_column
    if thresholds.broken_column_threshold and ratio > thresholds.broken_column_threshold:
        return TabStatus.BROKEN, (
            f"column {column}: {100 * ratio:.0f}% of cells failed "
            f"(threshold {100 * thresholds.broken_column_threshold:.0f}%)"
        )
    if not job.builds:
        return TabStatus.STALE, "no completed results"
    if not job.builds[0].started:
        return TabStatus.STALE, f"latest column {job.builds[0].id} has no start time"
    age_hours = (now - job.builds[0].started) / 3600
    if thresholds.stale_hours and age_hours > thresholds.stale_hours:
        return TabStatus.STALE, f"latest column {job.builds[0].id} is {age_hours:.0f} h old"
    if alerts:
        names = ", ".join(alert.row for alert in alerts[:3]) + (" …" if len(alerts) > 3 else "")
        return TabStatus.FAILING, f"{len(alerts)} consistently failing: {names}"
    if flaky:
        return TabStatus.FLAKY, "failures in recent columns that are not consistent"
    if found:
        return TabStatus.PASSING, f"no failures in the {thresholds.num_columns_recent} most recent columns"
    return TabStatus.UNKNOWN, "no results in recent columns"


def _latest_green(columns: _Columns) -> str:
    """TestGrid's latestGreen (without a column_header, the build id)."""
    for index, build in enumerate(columns.job.builds):
        statuses = columns.statuses(index, ignore_running=False)
        if statuses[Status.PASS] and not statuses[Status.FAIL] and not statuses[Status.FLAKY]:
            return build.id
    return ""
