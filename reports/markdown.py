"""`--format markdown`: a short summary of the report to paste into an issue or a pull request."""

from __future__ import annotations

import re

from winsuite_reports.analysis import Report
from winsuite_reports.junit import elide
from winsuite_reports.render import pct
from winsuite_reports.render import when

SHOWN = 5  # names listed per section before "and N more"
_SPECIAL = re.compile(r"([\\`*_\[\]|#])")


def text(value: str) -> str:
    """Plain text in markdown: markup characters escaped, angle brackets as entities (never raw HTML)."""
    return _SPECIAL.sub(r"\\\1", value).replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def markdown_summary(report: Report) -> str:
    readiness = report.readiness
    lines = [f"### Release readiness: **{'READY' if readiness.ready else 'NOT READY'}**", ""]
    lines += [f"- {text(reason)}" for reason in readiness.reasons]
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
        lines += [
            f"| {test.flakiness:.1f} % | {text(test.row)} | {text(tab.job.tab)} |" for tab, test in flaky
        ]
    if report.clusters:
        lines += ["", "| Failures | Class | Tests | Jobs | Failure |", "|---|---|---|---|---|"]
        lines += [f"| {cluster.count} | {cluster.failure_class} | {len(cluster.rows)} "
                  f"| {text(', '.join(cluster.jobs))} | {text(elide(cluster.text))} |"
                  for cluster in report.clusters[:SHOWN]]
    return "\n".join(lines) + "\n"
