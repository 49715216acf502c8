"""Failures counted per class: per build (a grid column's header) and over a tab's recent columns, with the pass rate
that leaves infrastructure failures out beside the raw one (TestGrid's health analysis counts them apart). The
engines' cross-checks are no test of the product: counted beside, never in these."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from winsuite_reports.conventions import cross_check_rows
from winsuite_reports.cross_checks import CrossChecks
from winsuite_reports.cross_checks import check_counts
from winsuite_reports.cross_checks import tally
from winsuite_reports.cross_checks import without
from winsuite_reports.evidence import CLASS_ORDER
from winsuite_reports.job import Job
from winsuite_reports.model import Build
from winsuite_reports.model import Status


@dataclass(frozen=True)
class FailureCounts:
    """Failed rows per class (rows that passed on a retry counted apart, as flaky)."""

    classes: tuple[tuple[str, int], ...]  # in CLASS_ORDER, the classes present
    flaky: int

    @property
    def failed(self) -> int:
        return sum(n for _, n in self.classes)

    def label(self) -> str:
        """e.g. "infrastructure 2 · test 1 · flaky 1"; "" when nothing failed."""
        parts = [f"{name} {n}" for name, n in self.classes] + ([f"flaky {self.flaky}"] if self.flaky else [])
        return " · ".join(parts)


NONE = FailureCounts((), 0)


def per_build(job: Job) -> dict[str, FailureCounts]:
    """Each build's failures per class (builds without a failure left out), of the product's tests."""
    if job.failures is None:
        return {}
    classes: dict[str, Counter[str]] = {}
    flaky: Counter[str] = Counter()
    checks = set(cross_check_rows(job.rows))
    for occurrence in job.failures.occurrences:
        if occurrence.row in checks:
            continue
        if occurrence.flaky:
            flaky[occurrence.build] += 1
        else:
            classes.setdefault(occurrence.build, Counter())[occurrence.failure_class] += 1
    return {build: _counts(classes.get(build, Counter()), flaky[build]) for build in classes.keys() | flaky.keys()}


def _counts(classes: Counter[str], flaky: int) -> FailureCounts:
    return FailureCounts(tuple((name, classes[name]) for name in CLASS_ORDER if classes[name]), flaky)


@dataclass(frozen=True)
class FailureFigures:
    """A tab's cells over its recent columns: how many passed, and its failures per class; the product's tests' only,
    with the engines' cross-checks counted beside."""

    columns: int
    passed: int
    ran: int  # cells that passed, failed or flaked
    infra: int  # failed cells counted apart: infrastructure (winsuite_reports.evidence.is_infra_failure)
    counts: FailureCounts
    cross_checks: CrossChecks

    @property
    def pass_rate(self) -> float | None:
        """Passed cells of those that ran."""
        return self.passed / self.ran if self.ran else None

    @property
    def pass_rate_without_infra(self) -> float | None:
        """Passed cells of those that ran, infrastructure failures left out."""
        return self.passed / (self.ran - self.infra) if self.ran > self.infra else None

    def as_json(self) -> dict[str, object]:
        """The figures as `--format json` gives them."""
        rates = (self.pass_rate, self.pass_rate_without_infra)
        raw, without_infra = (None if rate is None else round(rate, 4) for rate in rates)
        return {"columns": self.columns,
                "cells": {"passed": self.passed, "ran": self.ran, "infrastructure": self.infra},
                "pass_rate": raw, "pass_rate_without_infrastructure": without_infra,
                "failures_by_class": dict(self.counts.classes), "flaky": self.counts.flaky,
                "cross_checks": self.cross_checks.as_json()}


def figures(job: Job, builds: Sequence[Build]) -> FailureFigures:
    """The figures of `builds` (a tab's recent columns)."""
    ids = {build.id for build in builds}
    checked = [(without(build.counts, checks), checks)
               for build, checks in zip(job.builds, check_counts(job), strict=True) if build.id in ids]
    passed = sum(counts.get(Status.PASS, 0) for counts, _ in checked)
    ran = passed + sum(counts.get(Status.FAIL, 0) + counts.get(Status.FLAKY, 0) for counts, _ in checked)
    classes: Counter[str] = Counter()
    flaky = infra = 0
    rows = set(cross_check_rows(job.rows))
    for occurrence in job.failures.occurrences if job.failures is not None else ():
        if occurrence.build not in ids or occurrence.row in rows:
            continue
        if occurrence.flaky:
            flaky += 1
        else:
            classes[occurrence.failure_class] += 1
            infra += occurrence.infra
    return FailureFigures(len(builds), passed, ran, infra, _counts(classes, flaky),
                          tally(checks for _, checks in checked))
