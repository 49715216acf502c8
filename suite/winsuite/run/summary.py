"""The end-of-run summary: the result and what decided it beyond the rows, counts, failures with their one-line
messages, skips by reason, flakes, paths."""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from winsuite.results.merge import final_attempts
from winsuite.results.merge import verdict
from winsuite.results.model import Attempt
from winsuite.run.evidence import os_keys
from winsuite.run.evidence import placement_unknown
from winsuite_reports.conventions import FailureClass
from winsuite_reports.conventions import cross_check_rows

# finished.json's metadata that decides a result beyond the rows: the run's error, the flake policy, each shard build
# that did not pass (a run can fail with every row passed: a shard lost, a flake under --fail-on-flaky).
RESULT_REASONS = ("error", "flaky-policy", "shards-not-passed")


def result_reasons(metadata: Mapping[str, Any]) -> list[str]:
    """The reasons finished.json's metadata gives for the result, in RESULT_REASONS' order."""
    reasons: list[str] = []
    for key in RESULT_REASONS:
        value = metadata.get(key)
        reasons += [str(v) for v in value] if isinstance(value, list) else [str(value)] if value else []
    return reasons


def summarize(attempts: Iterable[Attempt], *, build_dir: Path, result: str, interrupted: str,
              dashboard: str | None, reasons: Sequence[str] = ()) -> str:
    by_test = final_attempts(list(attempts))
    verdicts = {name: verdict(rows) for name, rows in by_test.items()}
    # The engines' cross-checks are self-checks of winsuite, not tests of the product: counted apart.
    checks = set(cross_check_rows(by_test))
    counts = collections.Counter(v for name, v in verdicts.items() if name not in checks)
    checked = collections.Counter(verdicts[name] for name in checks)
    lines = [
        "",
        f"winsuite: {result}" + (f" ({interrupted})" if interrupted else ""),
        *(f"  why: {reason}" for reason in reasons),
        "  " + ", ".join(f"{counts.get(k, 0)} {k}" for k in ("passed", "failed", "flaky", "skipped", "interrupted")),
        *([f"  engines cross-checked on {len(checks)} test(s), apart from the counts above: {checked['passed']} "
           f"agree, {checked['failed']} disagree, {checked['skipped']} not compared"] if checks else []),
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
    skips = collections.Counter(rows[-1].message for n, rows in by_test.items()
                                if verdicts[n] == "skipped" and n not in checks)
    if skips:
        lines.append(f"\nSkipped ({sum(skips.values())}), by reason:")
        for reason, count in skips.most_common():
            lines.append(f"  {count:4d}  {reason}")
    evidence = evidence_counts(by_test)
    if evidence.failure_classes:
        lines.append("\nFailures by class: " + ", ".join(f"{count} {name}" for name, count in
                                                      evidence.failure_classes.items()))
    if evidence.ran_on:
        lines.append("Ran on: " + ", ".join(f"{where}: {count} test(s)" for where, count in evidence.ran_on.items()))
    unknown = {placement_unknown(rows[-1]) for rows in by_test.values()} - {""}
    if evidence.placement_unknown:
        lines.append(f"Placement unknown for {evidence.placement_unknown} test(s), not judged where they ran: "
                     + "; ".join(sorted(unknown)))
    lines.append(f"\nArtifacts: {build_dir}")
    if dashboard:
        lines.append(f"Dashboard: {dashboard}")
    return "\n".join(lines) + "\n"


@dataclasses.dataclass(frozen=True)
class EvidenceCounts:
    """What finished.json and the summary say of the rows' evidence: failed tests per class, tests per OS (and
    Windows build) their pods ran on, and flaky tests."""

    failure_classes: dict[str, int]
    ran_on: dict[str, int]
    flaky: int
    placement_unknown: int = 0  # tests a watch the run could not open left unjudged

    def metadata(self) -> dict[str, Any]:
        return {"failure-classes": self.failure_classes, "ran-on": self.ran_on, "flaky": self.flaky,
                **({"placement-unknown": self.placement_unknown} if self.placement_unknown else {})}


def evidence_counts(by_test: dict[str, list[Attempt]]) -> EvidenceCounts:
    """Of the product's tests: the engines' cross-checks are counted apart (see summarize)."""
    checks = set(cross_check_rows(by_test))
    by_test = {name: rows for name, rows in by_test.items() if name not in checks}
    verdicts = {name: verdict(rows) for name, rows in by_test.items()}
    classes = collections.Counter(rows[-1].properties.failure_class or FailureClass.TEST
                                  for name, rows in by_test.items() if verdicts[name] in ("failed", "interrupted"))
    ran_on = collections.Counter(where for rows in by_test.values() for where in os_keys(rows[-1].properties.ran_on))
    return EvidenceCounts({str(c): classes[c] for c in FailureClass if classes[c]}, dict(sorted(ran_on.items())),
                          sum(v == "flaky" for v in verdicts.values()),
                          sum(bool(placement_unknown(rows[-1])) for rows in by_test.values()))
