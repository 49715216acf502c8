"""Upstream's windows-operational-readiness `specifications/` as published (tests/fixtures/ops-readiness-upstream):
imported unchanged, and each case selects over the pinned upstream names exactly what ginkgo selects for the flags
upstream's `op-readiness` gives e2e.test (focus values joined with '|', skip values likewise)."""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import io
import re
from pathlib import Path

import pytest

from tests.tools.ginkgo_golden import ginkgo_selection
from tests.unit.test_ginkgo_agreement import WORKERS
from tests.unit.test_ginkgo_agreement import find_e2e_test
from tests.unit.test_ginkgo_agreement import names_file
from tests.unit.test_golden import compare
from winsuite import cli
from winsuite.errors import ExitCode
from winsuite.policy.ops_readiness import NO_CASES
from winsuite.policy.ops_readiness import OpsCase
from winsuite.policy.ops_readiness import cases_of
from winsuite.policy.ops_readiness import load_specifications
from winsuite.policy.ops_readiness import select
from winsuite.policy.upstream_names import read_names_file

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "ops-readiness-upstream"
SPECS = FIXTURE / "specifications"
GOLDEN = Path(__file__).parent / "golden" / "ops_readiness" / "upstream-specifications"


def git_blob_id(path: Path) -> str:
    """What `git hash-object` prints for the file."""
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def test_the_fixture_is_upstreams_files_byte_for_byte() -> None:
    listed = dict((path, blob) for blob, path in
                  re.findall(r"^([0-9a-f]{40})  (\S+)$", (FIXTURE / "PROVENANCE.md").read_text(), re.MULTILINE))
    here = {str(p.relative_to(FIXTURE)) for p in FIXTURE.rglob("*") if p.is_file()} - {"PROVENANCE.md"}

    assert len(listed) == 19 and set(listed) == here
    assert {path: git_blob_id(FIXTURE / path) for path in listed} == listed


def test_every_specification_is_imported_and_the_empty_ones_are_categories_without_cases() -> None:
    specs = load_specifications([str(SPECS)])

    assert {spec.category: len(spec.cases) for spec in specs} == {
        "Core.Concurrent": 1, "Core.Network": 10, "Core.Scheduling": 2, "Core.Storage": 4,
        "Extend.ActiveDirectory": 2, "Extend.HostProcess": 0, "Extend.NetworkPolicy": 2, "Extend.Network": 2,
        "Extend.Worker": 0,
    }
    network = next(s for s in specs if s.category == "Extend.NetworkPolicy")
    assert network.cases[1].skip == ("Driver|Slow|Driver",)
    assert network.cases[0].description.startswith("Ability to protect IPv4 pods from accessing other pods when TCP "
                                                   "NetworkPolicys are present")  # a folded line, as YAML joins it


def pinned_names() -> list[str]:
    return read_names_file(names_file())


def render(cases: list[OpsCase]) -> str:
    lines = []
    for selection in select(cases, pinned_names()):
        lines.append(f"{selection.case.category}: {selection.case.description}")
        lines += [f"    {name}" for name in selection.names] or ["    (selects nothing)"]
    return "\n".join(lines) + "\n"


def test_each_case_selects_what_the_golden_says(request: pytest.FixtureRequest) -> None:
    compare(GOLDEN, render(cases_of(load_specifications([str(SPECS)]))), request.config)


def op_readiness_flags(case: OpsCase) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """buildCmd of op-readiness (pkg/testcases/cases.go): one --ginkgo.focus of the joined focus values, and one
    --ginkgo.skip of the joined skip values when the case has any."""
    return ("|".join(case.focus),), (("|".join(case.skip),) if case.skip else ())


def test_live_ginkgo_selects_the_same_for_every_case() -> None:
    e2e_test = find_e2e_test()
    if e2e_test is None:
        pytest.skip("needs an upstream e2e.test binary (WINSUITE_E2E_TEST, or `winsuite cluster build --e2e-test`); "
                    "the golden file was still checked")
    cases = cases_of(load_specifications([str(SPECS)]))
    flags = sorted({op_readiness_flags(case) for case in cases})
    names = pinned_names()

    def ginkgo_runs(focus_and_skip: tuple[tuple[str, ...], tuple[str, ...]]) -> list[str]:
        focus, skip = focus_and_skip
        selected = ginkgo_selection(e2e_test, list(focus), list(skip))
        decorated = selected - set(names)  # "… [kubelet: [>=1.36]]": a constraint ginkgo's JUnit appends
        return [n for n in names if n in selected or any(d.startswith(n + " [") for d in decorated)]

    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        by_flags = dict(zip(flags, pool.map(ginkgo_runs, flags), strict=True))
    for selection in select(cases, names):
        assert selection.names == sorted(by_flags[op_readiness_flags(selection.case)]), selection.case.source


def list_output(*args: str) -> tuple[int, str]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = cli.main(["list", "--engine", "auto", *args])
    return code, printed.getvalue()


def test_list_shows_every_case_and_the_empty_categories() -> None:
    code, output = list_output("--ops-readiness", str(SPECS), "--node-os", "windows")

    assert code == ExitCode.OK
    assert f"Extend.HostProcess: {NO_CASES} ({SPECS / 'ext-hostprocess' / 'spec.yaml'})" in output
    assert f"Extend.Worker: {NO_CASES}" in output
    # Selected, and then skipped by the job's exclusion list (mount propagation is not supported on Windows).
    assert "skip  upstream  [sig-node] Mount propagation should propagate mounts within defined scopes" in output
    assert "9 specification(s), 23 test case(s)" in output and "2 specification(s) with no test cases" in output


def test_a_linux_only_test_a_case_selects_is_left_out_on_the_windows_target(tmp_path: Path) -> None:
    spec = tmp_path / "core-storage" / "spec.yaml"
    spec.parent.mkdir()
    spec.write_text("category: Core.Storage\ntestCases:\n  - description: modes\n    focus:\n"
                    "      - 'ConfigMap should be consumable from pods in volume with defaultMode set'\n"
                    "    skip:\n      - ''\n")
    name = ("[sig-storage] ConfigMap should be consumable from pods in volume with defaultMode set [LinuxOnly] "
            "[NodeConformance] [Conformance]")

    on_windows = list_output("--ops-readiness", str(spec), "--node-os", "windows")[1]
    on_linux = list_output("--ops-readiness", str(spec), "--node-os", "linux")[1]

    assert f"skip  native    {name}" in on_windows
    assert f"run   native    {name}" in on_linux
