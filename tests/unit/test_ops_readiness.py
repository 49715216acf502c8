"""windows-operational-readiness specifications: read as they are, strictly; what each case selects; row labels."""

from __future__ import annotations

from pathlib import Path

import pytest

from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.policy.ops_readiness import NO_CASES
from winsuite.policy.ops_readiness import OpsCase
from winsuite.policy.ops_readiness import cases_of
from winsuite.policy.ops_readiness import load_specifications
from winsuite.policy.ops_readiness import select
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome
from winsuite.run.ops_run import OpsRun
from winsuite_reports.conventions import RowProperties

FIXTURE = Path(__file__).parents[1] / "fixtures" / "ops-readiness"
HOST_IP = "[sig-node] Pods should get a host IP [NodeConformance] [Conformance]"
LOGS = "[sig-node] Pods should support retrieving logs from the container over websockets [NodeConformance] " \
       "[Conformance]"
SERVICE = "[sig-network] Services should serve a basic endpoint from pods [Conformance]"
SLOW_SERVICE = "[sig-network] Services should serve a basic endpoint from pods [Slow]"


def load_cases(paths: list[str], *categories: str) -> list[OpsCase]:
    return cases_of(load_specifications(paths, categories))


def test_the_fixture_in_the_upstream_format_is_read_whole() -> None:
    cases = load_cases([str(FIXTURE)])
    assert [c.category for c in cases].count("Core.Network") == 3 and len(cases) == 7
    network = cases[0]
    assert network.kubernetes_versions == ("v1.36",) and network.skip == ()


def test_a_category_keeps_only_its_cases() -> None:
    assert {c.category for c in load_cases([str(FIXTURE)], "Core.Pods")} == {"Core.Pods"}
    with pytest.raises(UsageError, match=r"--category Core\.Nope: no specification of that category"):
        load_cases([str(FIXTURE)], "Core.Pods", "Core.Nope")


def test_category_is_repeatable_as_in_op_readiness() -> None:
    cases = load_cases([str(FIXTURE)], "Core.Pods", "Core.Network")
    assert {c.category for c in cases} == {"Core.Pods", "Core.Network"} and len(cases) == 5


def test_cases_select_by_focus_and_skip() -> None:
    selections = select(load_cases([str(FIXTURE)], "Core.Network"), [SERVICE, SLOW_SERVICE, HOST_IP])
    by_description = {s.case.description: s.names for s in selections}
    assert by_description["Ability to reach a Service through its cluster IP"] == [SERVICE]
    assert by_description["Ability to access Windows container IP by pod IP"] == []


def test_versions_and_providers_decide_whether_a_case_applies() -> None:
    cases = load_cases([str(FIXTURE)], "Core.Network")
    on_kind = select(cases, [], kubernetes_version="v1.36.3", provider="kind")
    assert [s.not_applicable for s in on_kind] == [None, None, "skipped for provider kind"]
    older = select(cases, [], kubernetes_version="v1.35.1", provider="azure")
    assert older[0].not_applicable == "only for Kubernetes v1.36 (found: v1.35.1)"


@pytest.mark.parametrize(("text", "says"), [
    ("testCases: []\n", "category: required"),
    ("category: Core.Pods\ntestCases: {a: 1}\n", "testCases: expected a list of test cases, got dict"),
    ("category: Core.Pods\ntestCases: [{description: x, focus: ['']}]\n", "testCases[0].focus: required"),
    ("category: Core.Pods\ntestCases: [{description: x}]\n", "testCases[0].focus: required"),
    ("category: Core.Pods\ntestCases: [{description: x, focus: ['(']}]\n", "testCases[0].focus[0]: not a Go regex"),
    ("category: Core.Pods\ntestCases: [{description: x, focus: [a], skp: [b]}]\n", "testCases[0].skp: unknown field"),
    ("category: Core.Pods\ntestCases: [{focus: [a]}]\n", "testCases[0].description: required"),
    ("category: Core.Pods\ntestCases: [{description: x, focus: a}]\n", "testCases[0].focus: expected a list"),
    ("category: Core.Pods\ntestCases: [{description: x, focus: [a], kubernetesVersions: [1.36]}]\n",
     "testCases[0].kubernetesVersions: expected a list of strings"),
    ("- a\n", "expected a mapping"),
    ("category: [\n", "not valid YAML"),
])
def test_a_bad_spec_file_is_one_line_naming_file_and_field(tmp_path: Path, text: str, says: str) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    with pytest.raises(DataError) as raised:
        load_cases([str(spec)])
    assert str(raised.value).startswith(str(spec)) and says in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_spec_file_not_in_utf8_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(b"category: caf\xe9\n")
    with pytest.raises(DataError, match="not UTF-8"):
        load_cases([str(spec)])


def test_a_missing_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file or directory"):
        load_cases([str(tmp_path / "nope")])


@pytest.mark.parametrize("cases", ["", "testCases:\n", "testCases: []\n",
                                   "testCases:\n# - description: x\n#   focus: ['']\n"])
def test_a_specification_without_test_cases_is_a_category_with_none(tmp_path: Path, cases: str) -> None:
    spec = tmp_path / "ext-worker" / "spec.yaml"
    spec.parent.mkdir()
    spec.write_text("category: Extend.Worker\n" + cases)

    [read] = load_specifications([str(tmp_path)])

    assert (read.category, read.cases, read.source) == ("Extend.Worker", (), str(spec))


def test_an_empty_skip_skips_nothing_as_ginkgo_ignores_an_empty_joined_skip() -> None:
    case = OpsCase("Core.Network", "x", ("should serve",), ("",), (), (), "spec.yaml: testCases[0]")
    both = OpsCase("Core.Network", "x", ("should serve",), ("", "Slow"), (), (), "spec.yaml: testCases[0]")

    assert case.selects(SERVICE) and case.selects(SLOW_SERVICE)
    assert not both.selects(SERVICE)  # "|Slow" has an empty alternative: it matches every name, as in ginkgo


def test_rows_carry_the_category_and_case_and_empty_cases_get_a_row() -> None:
    ops = OpsRun(load_specifications([str(FIXTURE)], ["Core.Pods", "Extend.HostProcess"]))
    ops.selections = select(ops.cases, [HOST_IP, LOGS])
    rows = ops.label("junit_01.xml", [Attempt(HOST_IP, "n1", Outcome.PASSED), Attempt("other", "n2", Outcome.PASSED)])
    assert rows[0].properties == RowProperties(category="Core.Pods",
                                               ops_readiness_case="Ability to schedule a pod and read its host IP")
    assert rows[1].properties == RowProperties()
    empty = [r for r in rows if r.name.startswith("[ops-readiness]")]
    assert len(empty) == 2 and all(r.outcome is Outcome.SKIPPED and "selects no test" in r.message for r in empty)
    assert not [r for r in ops.label("junit_02.xml", []) if r.name.startswith("[ops-readiness]")]


def test_a_specification_without_cases_gets_a_row_saying_so(tmp_path: Path) -> None:
    spec = tmp_path / "ext-hostprocess" / "spec.yaml"
    spec.parent.mkdir()
    spec.write_text("category: Extend.HostProcess\ntestCases:\n# - description: x\n")
    ops = OpsRun(load_specifications([str(tmp_path)]))
    ops.selections = select(ops.cases, [HOST_IP])

    [row] = ops.label("junit_01.xml", [])

    assert row.name == f"[ops-readiness] Extend.HostProcess: {NO_CASES}" and row.outcome is Outcome.SKIPPED
    assert row.message == f"{NO_CASES} ({spec})"
    assert row.properties == RowProperties(category="Extend.HostProcess", ops_readiness_case=NO_CASES)
