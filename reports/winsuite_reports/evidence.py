"""What a build's rows say beyond their grid cells: each failure's whole text and class (the Failures page clusters
them) and the nodes each row ran on (every cell's detail), as a parse finds them and the report's cache keeps them."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

from winsuite_reports.conventions import FailureClass
from winsuite_reports.model import Cell
from winsuite_reports.model import Status
from winsuite_reports.triage import normalize

UNCLASSIFIED = "unclassified"  # a failure whose results name no class (upstream artifacts, older runs)
# The order the dashboard lists failure classes in: infrastructure first, as TestGrid sets it apart.
CLASS_ORDER = (*(str(member) for member in FailureClass), UNCLASSIFIED)
# A failure whose whole message is one word ("Timeout", "Error") is an infrastructure failure to TestGrid: its
# summarizer's `^\w+$` in Go (RE2's \w is ASCII, its $ the end of the text), used here with fullmatch.
INFRA_MESSAGE = re.compile(r"\w+", re.ASCII)


def is_infra_failure(cell: Cell) -> bool:
    """Whether a failed cell is counted apart from the test's own failures, as TestGrid counts infrastructure
    failures (Departure.INFRASTRUCTURE_BY_CLASS):

    - a cell whose results name a class is infrastructure exactly when that class is `infrastructure`, whatever its
      message: an interrupted cell of class `timeout`, `setup` or `test` is the test's failure;
    - an interrupted cell with no class (a run cut off by a signal, no evidence) is: the run, not the test, went wrong;
    - a cell with neither keeps TestGrid's rule, a one-word message.
    """
    if cell.failure_class:
        return cell.failure_class == FailureClass.INFRASTRUCTURE
    if cell.interrupted:
        return True
    return INFRA_MESSAGE.fullmatch(cell.message) is not None


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed (or flaky) row of one build, as the Failures page clusters it."""

    row: str
    failure_class: str  # a FailureClass value, or UNCLASSIFIED
    evidence: str
    text: str  # the failure's message and body (its first failed attempt's)
    normalized: str  # `text` with what varies between occurrences masked (reports.triage)
    flaky: bool  # the row passed on a retry in this build
    infra: bool  # counted apart from the test's own failures, as TestGrid counts infrastructure failures


@dataclass(frozen=True, slots=True)
class BuildEvidence:
    failures: tuple[Failure, ...] = ()
    ran_on: Mapping[str, str] = field(default_factory=dict)  # row -> the nodes its pods ran on


NO_EVIDENCE = BuildEvidence()


def failure_of(row: str, cell: Cell, text: str, *, infra: bool) -> Failure:
    """The Failures page's record of a failed or flaky cell whose first failed attempt said `text`."""
    return Failure(row, cell.failure_class or UNCLASSIFIED, cell.evidence, text, normalize(text),
                   cell.status is Status.FLAKY, infra)


def encode_failures(failures: tuple[Failure, ...]) -> str:
    return _dumps([[f.row, f.failure_class, f.evidence, f.text, f.normalized, f.flaky, f.infra] for f in failures])


def decode_failures(text: str) -> tuple[Failure, ...]:
    """Stored failures; ValueError, TypeError or KeyError when the text is not such failures."""
    return tuple(Failure(str(row), str(failure_class), str(evidence), str(whole), str(normalized), bool(flaky),
                         bool(infra))
                 for row, failure_class, evidence, whole, normalized, flaky, infra in json.loads(text))


def encode_ran_on(ran_on: Mapping[str, str]) -> str:
    """Rows grouped by where they ran: a build's thousand rows ran on a handful of node sets."""
    grouped: dict[str, list[str]] = {}
    for row, nodes in ran_on.items():
        grouped.setdefault(nodes, []).append(row)
    return _dumps(grouped)


def decode_ran_on(text: str) -> dict[str, str]:
    return {str(row): str(nodes) for nodes, rows in json.loads(text).items() for row in rows}


def _dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
