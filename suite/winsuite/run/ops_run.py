"""`winsuite run --ops-readiness`: a run whose selection is what windows-operational-readiness test cases select,
with every row labelled with the category and case that selected it, and a row for each case that selects
nothing or does not apply to the cluster, and for each specification with no test cases."""

from __future__ import annotations

import dataclasses

from winsuite.authoring.facts import ClusterFacts
from winsuite.policy.ops_readiness import NO_CASES
from winsuite.policy.ops_readiness import CaseSelection
from winsuite.policy.ops_readiness import OpsCase
from winsuite.policy.ops_readiness import OpsSpecification
from winsuite.policy.ops_readiness import cases_of
from winsuite.policy.ops_readiness import select
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite_reports.conventions import RowProperties

CASE_ROW_PREFIX = "[ops-readiness] "
FIRST_JUNIT = "junit_01.xml"


def provider_of(facts: ClusterFacts) -> str | None:
    """The cloud provider of the nodes' providerID ("azure://…" -> azure), as skipProviders names them."""
    schemes = {n.provider_id.split("://", 1)[0] for n in facts.nodes if n.provider_id and "://" in n.provider_id}
    return schemes.pop() if len(schemes) == 1 else None


@dataclasses.dataclass
class OpsRun:
    specifications: list[OpsSpecification]
    selections: list[CaseSelection] = dataclasses.field(default_factory=list)

    @property
    def cases(self) -> list[OpsCase]:
        return cases_of(self.specifications)

    @property
    def empty(self) -> list[OpsSpecification]:
        """The specifications with no test cases (upstream: "No Operational Readiness tests to run")."""
        return [spec for spec in self.specifications if not spec.cases]

    def select(self, names: list[str], facts: ClusterFacts) -> list[str]:
        """Exactly the tests the cases that apply to this cluster select."""
        self.selections = select(self.cases, names, kubernetes_version=facts.server_version,
                                 provider=provider_of(facts))
        return sorted({n for s in self.selections if s.not_applicable is None for n in s.names})

    def label(self, name: str, attempts: list[Attempt]) -> list[Attempt]:
        """Rows with the category and case(s) that selected them; the first phase's file also gets a row per
        case that selects nothing or does not apply."""
        cases: dict[str, list[OpsCase]] = {}
        for selection in self.selections:
            if selection.not_applicable is None:
                for selected in selection.names:
                    cases.setdefault(selected, []).append(selection.case)
        labelled = [self._labelled(a, cases[a.name]) if a.name in cases else a for a in attempts]
        return labelled + (self._case_rows() if name == FIRST_JUNIT else [])

    @staticmethod
    def _labelled(attempt: Attempt, cases: list[OpsCase]) -> Attempt:
        categories = ", ".join(dict.fromkeys(c.category for c in cases))
        descriptions = " | ".join(dict.fromkeys(c.description for c in cases))
        properties = dataclasses.replace(attempt.properties, category=categories, ops_readiness_case=descriptions)
        return dataclasses.replace(attempt, properties=properties)

    def _case_rows(self) -> list[Attempt]:
        rows = []
        for selection in self.selections:
            case = selection.case
            why = selection.not_applicable or ("" if selection.names else
                                               f"selects no test of the catalog (focus {list(case.focus)}, "
                                               f"skip {list(case.skip)}; {case.source})")
            if why:
                rows.append(Attempt(f"{CASE_ROW_PREFIX}{case.category}: {case.description}", "", Outcome.SKIPPED,
                                    message=why, properties=RowProperties(category=case.category,
                                                                          ops_readiness_case=case.description)))
        for spec in self.empty:
            rows.append(Attempt(f"{CASE_ROW_PREFIX}{spec.category}: {NO_CASES}", "", Outcome.SKIPPED,
                                message=f"{NO_CASES} ({spec.source})",
                                properties=RowProperties(category=spec.category, ops_readiness_case=NO_CASES)))
        return rows
