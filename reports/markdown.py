"""`--format markdown`: a short summary of the report to paste into an issue or a pull request."""

from __future__ import annotations

import re

from winsuite_reports.analysis import Report
from winsuite_reports.departures import FLAKINESS_FIGURE
from winsuite_reports.departures import Departure
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
    lines += ["", "| Tab | Status | Pass rate (recent) | Last run | Latest green |", "|---|---|---|---|---|"]
    for tab in report.tabs:
        summary = tab.summary
        lines.append(
            f"| {text(tab.job.tab)} | {summary.status.value} | {pct(summary.pass_rate)} "
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
    return "\n".join(lines) + "\n"
