"""winsuite.policy.exclusions: exclusion lists parsed strictly, version ranges, scopes with unknown facts, lint."""

from __future__ import annotations

import datetime
import textwrap
from pathlib import Path

import pytest

from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.inputs.pins import load_pins
from winsuite.paths import jobs_dir
from winsuite.paths import upstream_names_file
from winsuite.policy.catalog import collect
from winsuite.policy.exclusions import Exclusion
from winsuite.policy.exclusions import Scope
from winsuite.policy.exclusions import ScopeFacts
from winsuite.policy.exclusions import lint
from winsuite.policy.exclusions import load_exclusions
from winsuite.policy.exclusions import read_exclusion_file
from winsuite.policy.upstream_names import read_names_file

HEADER = "apiVersion: winsuite.io/v1alpha1\nkind: ExclusionList\n"
ENTRY = "pattern: DNS\nreason: r\nissue: https://i/1\n"
TODAY = datetime.date(2026, 3, 1)


def write_list(tmp_path: Path, body: str, header: str = HEADER) -> Path:
    path = tmp_path / "list.yaml"
    path.write_text(header + textwrap.dedent(body))
    return path


def entries_yaml(*entries: str) -> str:
    """An `exclusions:` list of the given entry bodies (each a few `key: value` lines)."""
    return "exclusions:\n" + "".join("  - " + textwrap.indent(e, "    ").lstrip() for e in entries)


@pytest.mark.parametrize(
    ("body", "header", "field", "problem"),
    [
        (entries_yaml(ENTRY), "apiVersion: v1\nkind: ExclusionList\n", "apiVersion/kind", "expected apiVersion"),
        (entries_yaml(ENTRY), HEADER.replace("ExclusionList", "Job"), "apiVersion/kind", "kind: ExclusionList"),
        ("exclusions: {a: 1}\n", HEADER, "exclusions", "expected a list of entries"),
        ("exclusions: [just-a-string]\n", HEADER, "", "each exclusion is a mapping"),
        (entries_yaml(ENTRY + "reson: typo\n"), HEADER, "reson", "unknown key; known keys: id, pattern"),
        (entries_yaml(ENTRY + "name: exact\n"), HEADER, "pattern/name", "exactly one of pattern"),
        (entries_yaml("reason: r\nissue: i\n"), HEADER, "pattern/name", "exactly one of pattern"),
        (entries_yaml("pattern: DNS\nissue: i\n"), HEADER, "reason", "required (a non-empty string)"),
        (entries_yaml("pattern: DNS\nreason: r\nissue: '  '\n"), HEADER, "issue", "required"),
        (entries_yaml(ENTRY + "expires: soon\n"), HEADER, "expires", "expected a date like 2027-01-31"),
        (entries_yaml(ENTRY + "scope: [a]\n"), HEADER, "scope", "expected a mapping with keys among"),
        (entries_yaml(ENTRY + "scope: {os: windows}\n"), HEADER, "scope", "kubernetes, windowsBuilds"),
        (entries_yaml(ENTRY + "scope: {kubernetes: newest}\n"), HEADER, "scope.kubernetes", "invalid version range"),
        (entries_yaml(ENTRY + "scope: {windowsBuilds: 10.0.17763}\n"), HEADER, "scope.windowsBuilds", "a list"),
        (entries_yaml(ENTRY + "scope: {cni: [1]}\n"), HEADER, "scope.cni", "expected a list of strings"),
        ("exclusions: [\n", HEADER, "", "not valid YAML"),
    ],
)
def test_parse_error_names_file_and_field(tmp_path: Path, body: str, header: str, field: str, problem: str) -> None:
    path = write_list(tmp_path, body, header)
    with pytest.raises(DataError) as caught:
        read_exclusion_file(path)
    assert caught.value.path.startswith(str(path))
    assert caught.value.field == field
    assert problem in caught.value.problem
    assert "\n" not in str(caught.value)


def test_entry_errors_say_which_entry(tmp_path: Path) -> None:
    path = write_list(tmp_path, entries_yaml(ENTRY, "pattern: x\nissue: i\n"))
    with pytest.raises(DataError) as caught:
        read_exclusion_file(path)
    assert caught.value.path == f"{path}#exclusions[1]"


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"cannot read exclusion list .*missing\.yaml"):
        read_exclusion_file(tmp_path / "missing.yaml")


def test_entry_fields_are_read(tmp_path: Path) -> None:
    body = entries_yaml(
        "id: e1\nname: '[sig-node] exact name'\nreason: ' r '\nissue: i\nexpires: 2026-12-31\n"
        "scope: {kubernetes: '>=1.35', windowsBuilds: [10.0.17763], cni: [calico], containerRuntimes: [containerd]}\n"
    )
    (entry,) = read_exclusion_file(write_list(tmp_path, body))
    assert entry == Exclusion(
        source=f"{tmp_path / 'list.yaml'}#exclusions[0]", reason="r", issue="i", name="[sig-node] exact name",
        id="e1", expires=datetime.date(2026, 12, 31),
        scope=Scope(">=1.35", ("10.0.17763",), ("calico",), ("containerd",)),
    )


def test_invalid_regex_is_kept_for_lint_but_refused_for_a_run(tmp_path: Path) -> None:
    path = write_list(tmp_path, entries_yaml("pattern: 'a(?=b)'\nreason: r\nissue: i\n"))
    (entry,) = read_exclusion_file(path)
    assert entry.problem is not None
    assert not entry.matches("ab")
    with pytest.raises(DataError) as caught:
        load_exclusions([path])
    assert (caught.value.path, caught.value.field) == (f"{path}#exclusions[0]", "pattern")


FULL_FACTS = ScopeFacts("v1.36.3", frozenset({"10.0.17763"}), "calico", frozenset({"containerd://2.1.4"}))


@pytest.mark.parametrize(
    ("scope", "facts", "applies"),
    [
        (Scope(), None, True),
        (Scope(kubernetes=">=1.36"), FULL_FACTS, True),
        (Scope(kubernetes="<1.36"), FULL_FACTS, False),
        (Scope(kubernetes=">=1.36"), ScopeFacts(), False),  # unknown version: does not match
        (Scope(windows_builds=("10.0.17763",)), FULL_FACTS, True),
        (Scope(windows_builds=("10.0.20348",)), FULL_FACTS, False),
        (Scope(windows_builds=("10.0.17763",)), None, False),
        (Scope(cni=("calico", "flannel")), FULL_FACTS, True),
        (Scope(cni=("flannel",)), FULL_FACTS, False),
        (Scope(cni=("calico",)), ScopeFacts(kubernetes_version="v1.36.3"), False),
        (Scope(container_runtimes=("containerd",)), FULL_FACTS, True),  # a prefix of the runtime version
        (Scope(container_runtimes=("docker",)), FULL_FACTS, False),
        (Scope(">=1.36", ("10.0.17763",), ("calico",), ("containerd",)), FULL_FACTS, True),
        (Scope(">=1.36", ("10.0.17763",), ("flannel",), ("containerd",)), FULL_FACTS, False),  # all must hold
    ],
)
def test_scope_matching(scope: Scope, facts: ScopeFacts | None, applies: bool) -> None:
    assert scope.applies(facts) is applies


def test_scope_describes_itself() -> None:
    scope = Scope(">=1.36", ("10.0.17763",), (), ("containerd",))
    assert scope.describe() == "kubernetes >=1.36; Windows builds 10.0.17763; runtimes containerd"


@pytest.mark.parametrize(
    ("entry", "name", "matches"),
    [
        (Exclusion("s", "r", "i", pattern="DNS"), "[sig-network] DNS should work", True),
        (Exclusion("s", "r", "i", pattern=r"work\z"), "[sig-network] DNS should work [Slow]", False),
        (Exclusion("s", "r", "i", name="[sig-network] DNS"), "[sig-network] DNS should work", False),
        (Exclusion("s", "r", "i", name="[sig-network] DNS"), "[sig-network] DNS", True),
    ],
)
def test_pattern_matches_anywhere_and_name_exactly(entry: Exclusion, name: str, matches: bool) -> None:
    assert entry.matches(name) is matches


def test_lint_reports_every_problem_with_its_entry(tmp_path: Path) -> None:
    body = entries_yaml(
        "id: ok\npattern: DNS\nreason: r\nissue: i\nexpires: 2026-12-31\n",
        "id: old\npattern: Pods\nreason: r\nissue: i\nexpires: 2026-02-28\n",
        "id: bad-regex\npattern: 'x**'\nreason: r\nissue: i\n",
        "id: nothing\nname: '[sig-node] gone'\nreason: r\nissue: i\n",
        "id: ok\npattern: DNS\nreason: r\nissue: i\n",
    )
    path = write_list(tmp_path, body)
    problems = lint(read_exclusion_file(path), ["[sig-network] DNS works", "[sig-node] Pods work"], TODAY)
    assert problems == [
        f"{path}#exclusions[1]: expired on 2026-02-28 (old)",
        f"{path}#exclusions[2]: invalid regex: pattern 'x**': invalid nested repetition operator '**'",
        f"{path}#exclusions[3]: matches no known test (nothing)",
        f"{path}#exclusions[4]: duplicate id 'ok' (first at {path}#exclusions[0])",
    ]


def test_lint_of_a_clean_list_is_empty(tmp_path: Path) -> None:
    path = write_list(tmp_path, entries_yaml(ENTRY))
    assert lint(read_exclusion_file(path), ["[sig-network] DNS"], TODAY) == []


def test_shipped_exclusion_lists_lint_clean() -> None:
    names = [e.spec.full_name for e in collect()] + read_names_file(upstream_names_file(load_pins().kubernetes))
    entries = [e for path in sorted((jobs_dir() / "exclusions").glob("*.yaml")) for e in read_exclusion_file(path)]
    assert entries
    assert lint(entries, names, datetime.date.today()) == []
