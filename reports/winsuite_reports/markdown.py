"""`--format markdown`: a short summary of the report to paste into an issue or a pull request."""

from __future__ import annotations

import re

from winsuite_reports.analysis import Report
from winsuite_reports.compare import Comparison
from winsuite_reports.compare import SpecResult
from winsuite_reports.compare import Verdict
from winsuite_reports.departures import FLAKINESS_FIGURE
from winsuite_reports.departures import Departure
from winsuite_reports.formats import pct
from winsuite_reports.formats import when
from winsuite_reports.junit import elide
from winsuite_reports.model import Build
from winsuite_reports.model import Status

SHOWN = 5  # names listed per section before "and N more"
_SPECIAL = re.compile(r"([\\`*_\[\]|#])")


def text(value: str) -> str:
    """Plain text in markdown: markup characters escaped, angle brackets as entities (never raw HTML)."""
    return _SPECIAL.sub(r"\\\1", value).replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def markdown_summary(report: Report) -> str:
    readiness = report.readiness
    lines = [f"### Release readiness: **{'READY' if readiness.ready else 'NOT READY'}**", ""]
    lines += [f"- {text(reason)}" for reason in readiness.reasons]
    if readiness.cross_checks.label():
        lines += ["", f"The engines' cross-checks in those runs, winsuite's self-checks and no part of the verdict: "
                      f"{readiness.cross_checks.label()}."]
    lines += ["", "| Tab | Status | Pass rate (recent) | Cells passed: raw · infrastructure failures left out "
              "| Failures by class | Last run | Latest green |", "|---|---|---|---|---|---|---|"]
    for tab in report.tabs:
        summary, failures = tab.summary, tab.failures
        lines.append(
            f"| {text(tab.job.tab)} | {summary.status.value} | {pct(summary.pass_rate)} "
            f"| {pct(failures.pass_rate)} · {pct(failures.pass_rate_without_infra)} "
            f"| {text(failures.counts.label() or 'none')} "
            f"| {when(summary.last_run)} | {text(summary.latest_green or 'none')} |"
        )
    for tab in report.tabs:
        for diff in tab.diffs:
            lines += [
                "",
                f"**{text(tab.job.tab)}** {text(diff.old)} → {text(diff.new)}: "
                f"{len(diff.new_failures)} new failures, {len(diff.fixed)} fixed, "
                f"{len(diff.newly_flaky)} newly flaky, {len(diff.unexclude)} excluded tests now passing",
            ]
            for title, names in (("new failure", diff.new_failures), ("newly flaky", diff.newly_flaky)):
                lines += [f"- {title}: {text(name)}" for name in names[:SHOWN]]
                if len(names) > SHOWN:
                    lines.append(f"- … and {len(names) - SHOWN} more")
    flaky = report.top_flaky()
    if flaky:
        lines += ["", "| Flakiness | Test | Tab |", "|---|---|---|"]
        unrated = f" {Departure.RETRIED_EVERY_RUN.mark}"
        lines += [
            f"| {test.flakiness:.1f} % | {text(test.row)}{'' if test.rated_by_testgrid else unrated} "
            f"| {text(tab.job.tab)} |"
            for tab, test in flaky
        ]
        lines += ["", *(f"{text(departure.marked_note)}  " for departure in FLAKINESS_FIGURE)]
    if report.clusters:
        lines += ["", "| Failures | Class | Tests | Jobs | Failure |", "|---|---|---|---|---|"]
        lines += [f"| {cluster.count} | {cluster.failure_class} | {len(cluster.rows)} "
                  f"| {text(', '.join(cluster.jobs))} | {text(elide(cluster.text))} |"
                  for cluster in report.clusters[:SHOWN]]
    return "\n".join(lines) + "\n"


def compare_markdown(comparison: Comparison) -> str:
    """Two builds compared: each side's build and environment, counts per verdict, the specs matched by their text,
    and per category and tier every spec that differs."""
    a, b = comparison.a, comparison.b
    lines = [f"### Comparison: A {text(a.label)} · B {text(b.label)}", "", "| | A | B |", "|---|---|---|",
             f"| Build | {text(a.job)} {text(a.build.id)} | {text(b.job)} {text(b.build.id)} |",
             f"| Result | {_result(a.build)} | {_result(b.build)} |"]
    lines += [f"| {text(axis)} | {text(value_a)} | {text(value_b)} |" for axis, value_a, value_b in
              comparison.environment()]
    totals = comparison.totals()
    lines += ["", "| " + " | ".join(verdict.value for verdict in Verdict) + " |", "|---" * len(Verdict) + "|",
              "| " + " | ".join(str(totals[verdict]) for verdict in Verdict) + " |"]
    if comparison.renamed:
        lines += ["", f"{len(comparison.renamed)} spec(s) matched by their text, the tags apart (as TestGrid keeps a "
                      "row whose `[It]` text stays):"]
        lines += [f"- A: {text(name_a)} · B: {text(name_b)}" for name_a, name_b in comparison.renamed]
    for group in comparison.groups:
        differing = [spec for spec in group.specs if spec.verdict.differs]
        if not differing:
            continue
        lines += ["", f"#### {text(group.category)} · {text(group.tier)}"]
        for verdict in (v for v in Verdict if v.differs):
            specs = group.of(verdict)
            lines += [f"- {verdict.value}: {text(spec.name)}{_why(spec)}" for spec in specs[:COMPARE_SHOWN]]
            if len(specs) > COMPARE_SHOWN:
                lines.append(f"- {verdict.value}: … and {len(specs) - COMPARE_SHOWN} more")
    return "\n".join(lines) + "\n"


COMPARE_SHOWN = 50  # specs listed per verdict and group before "and N more"


def _result(build: Build) -> str:
    return build.overall.status.name + (f" ({text(build.overall.message)})" if build.overall.message else "")


def _why(spec: SpecResult) -> str:
    """What a differing spec's line adds: the failure message of the side that failed; for a spec only one side ran,
    how it went there and why the other side did not run it (its skip reason), where known."""
    if spec.verdict in (Verdict.RAN_ONLY_IN_A, Verdict.RAN_ONLY_IN_B):
        ran, other, side = (spec.a, spec.b, "B") if spec.verdict is Verdict.RAN_ONLY_IN_A else (spec.b, spec.a, "A")
        how = " (failed)" if ran.status is Status.FAIL else ""
        reason = f" — not run in {side}: {text(other.message)}" if other.message else ""
        return how + reason
    cell = spec.b if spec.verdict is Verdict.FAILED_ONLY_IN_B else spec.a
    return f" — {text(cell.message)}" if cell.message else ""
