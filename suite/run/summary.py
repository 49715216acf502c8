"""The end-of-run summary: counts, failures with their one-line messages, skips by reason, flakes, paths."""

from __future__ import annotations

import collections
from collections.abc import Iterable
from pathlib import Path

from winsuite.results.merge import final_attempts
from winsuite.results.merge import verdict
from winsuite.results.model import Attempt


def summarize(attempts: Iterable[Attempt], *, build_dir: Path, result: str, interrupted: str,
              dashboard: str | None) -> str:
    by_test = final_attempts(list(attempts))
    verdicts = {name: verdict(rows) for name, rows in by_test.items()}
    counts = collections.Counter(verdicts.values())
    lines = [
        "",
        f"winsuite: {result}" + (f" ({interrupted})" if interrupted else ""),
        "  " + ", ".join(f"{counts.get(k, 0)} {k}" for k in ("passed", "failed", "flaky", "skipped", "interrupted")),
    ]
    failed = [(n, rows[-1]) for n, rows in by_test.items() if verdicts[n] in ("failed", "interrupted")]
    if failed:
        lines.append(f"\nFailures ({len(failed)}):")
        for name, last in failed:
            diag = last.properties.diagnostics
            lines.append(f"  FAIL {name}\n       {last.message}")
            if diag:
                lines.append(f"       diagnostics: {build_dir / diag}")
    flaky = [(n, rows) for n, rows in by_test.items() if verdicts[n] == "flaky"]
    if flaky:
        lines.append(f"\nFlaky ({len(flaky)}), passed after failing:")
        for name, rows in flaky:
            lines.append(f"  FLAKY {name} ({len(rows)} attempts; first failure: {rows[0].message})")
    skips = collections.Counter(rows[-1].message for n, rows in by_test.items() if verdicts[n] == "skipped")
    if skips:
        lines.append(f"\nSkipped ({sum(skips.values())}), by reason:")
        for reason, count in skips.most_common():
            lines.append(f"  {count:4d}  {reason}")
    lines.append(f"\nArtifacts: {build_dir}")
    if dashboard:
        lines.append(f"Dashboard: {dashboard}")
    return "\n".join(lines) + "\n"
