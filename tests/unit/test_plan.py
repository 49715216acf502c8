"""winsuite.policy.plan: the KEP-116 plan as data, its coverage, and `winsuite plan --format json`."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from winsuite.commands.plan import exclusion_ids
from winsuite.errors import DataError
from winsuite.policy.catalog import collect
from winsuite.policy.plan import TIERS
from winsuite.policy.plan import Item
from winsuite.policy.plan import Plan
from winsuite.policy.plan import coverage
from winsuite.policy.plan import load_plan
from winsuite.policy.plan import read_plan_file

ROOT = Path(__file__).resolve().parents[2]
SEED_SOURCE = {"seed": "000.txt", "section": "What works today"}


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan()


def test_every_item_has_an_id_tier_title_and_source(plan: Plan) -> None:
    assert plan.items
    for item in plan.items:
        assert item.id and item.title
        assert item.tier in TIERS
        assert {"seed", "section"} <= set(item.source) or "upstream" in item.source, item.id


def test_ids_are_unique(plan: Plan) -> None:
    ids = [item.id for item in plan.items]
    assert sorted(i for i in set(ids) if ids.count(i) > 1) == []


def test_every_tier_has_items_and_items_are_ordered_by_tier(plan: Plan) -> None:
    assert all(by_tier(plan, tier) for tier in TIERS)
    assert [i.tier for i in plan.items] == sorted((i.tier for i in plan.items), key=TIERS.index)


def test_the_twenty_fields_forbidden_with_os_windows_are_items(plan: Plan) -> None:
    forbidden = [i for i in by_tier(plan, "api-compatibility") if i.id.startswith("api.forbidden.")]
    assert len(forbidden) == 20


def test_plan_names_only_tests_and_exclusions_that_exist(plan: Plan) -> None:
    names = {entry.spec.full_name for entry in collect()}
    ids = exclusion_ids()
    assert sorted(t for item in plan.items for t in item.tests if t not in names) == []
    assert sorted(e for item in plan.items for e in item.exclusions if e not in ids) == []


def test_coverage_counts_listed_tests_and_exclusions_that_exist() -> None:
    items = (
        Item("a", "adapted", "A", SEED_SOURCE, tests=("t1", "gone")),
        Item("b", "will-never-work", "B", SEED_SOURCE, exclusions=("e1",)),
        Item("c", "substitute", "C", SEED_SOURCE),
    )
    result = coverage(Plan(items), ["t1", "t2"], ["e1"])
    assert [(c.item.id, c.tests, c.exclusions, c.unknown, c.covered) for c in result] == [
        ("a", ("t1",), (), ("gone",), True),
        ("b", (), ("e1",), (), True),
        ("c", (), (), (), False),
    ]
    assert Plan(items).items_of_test("t1") == [items[0]]


def write_plan(directory: Path, name: str, body: str) -> Path:
    directory.mkdir(exist_ok=True)
    path = directory / name
    path.write_text(textwrap.dedent(body))
    return path


ITEM = "  - {id: x, title: X, source: {seed: s.txt, section: S}}\n"


@pytest.mark.parametrize(
    ("body", "field", "problem"),
    [
        ("tier: nonsense\nitems: []\n", "tier", "expected one of adapted, substitute"),
        ("tier: adapted\nitems: {}\n", "items", "expected a list of items"),
        ("tier: adapted\nitems: [x]\n", "items[0]", "expected a mapping with id, title and source"),
        ("tier: adapted\nitems:\n  - {id: x, title: X, source: {seed: s}, owner: me}\n", "items[0].owner",
         "unknown key; known keys: id, title"),
        ("tier: adapted\nitems:\n  - {title: X, source: {seed: s, section: S}}\n", "items[0].id", "required"),
        ("tier: adapted\nitems:\n  - {id: x, title: X, source: {seed: s}}\n", "items[0].source",
         "expected {seed: <file>, section: <heading>} or {upstream: <path>}"),
        ("tier: adapted\nitems:\n" + ITEM.replace("}}", "}, tests: t}"), "items[0].tests", "a list of strings"),
        ("tier: adapted\nitems: [\n", "", "not valid YAML"),
    ],
)
def test_bad_plan_file_names_file_and_field(tmp_path: Path, body: str, field: str, problem: str) -> None:
    path = write_plan(tmp_path, "p.yaml", body)
    with pytest.raises(DataError) as caught:
        read_plan_file(path)
    assert (caught.value.path, caught.value.field) == (str(path), field)
    assert problem in caught.value.problem


def test_duplicate_ids_across_files_are_refused(tmp_path: Path) -> None:
    first = write_plan(tmp_path, "a.yaml", "tier: adapted\nitems:\n" + ITEM)
    second = write_plan(tmp_path, "b.yaml", "tier: substitute\nitems:\n" + ITEM)
    with pytest.raises(DataError) as caught:
        load_plan(tmp_path)
    assert str(caught.value) == f"{second}: x: duplicate item id (also in {first})"


def test_plan_json_through_the_cli(plan: Plan) -> None:
    done = subprocess.run([sys.executable, "-m", "winsuite.cli", "plan", "--format", "json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    document = json.loads(done.stdout)
    assert set(document) == {"items", "uncovered"}
    for item in document["items"]:
        assert set(item) == {"id", "tier", "title", "source", "tests", "exclusions"}
        assert all(isinstance(item[k], str) and item[k] for k in ("id", "tier", "title", "source"))
        assert all(isinstance(v, str) for k in ("tests", "exclusions") for v in item[k])
    assert [i["id"] for i in document["items"]] == [i.id for i in plan.items]
    assert document["uncovered"] == [i["id"] for i in document["items"] if not i["tests"] and not i["exclusions"]]


def by_tier(plan: Plan, tier: str) -> list[Item]:
    return [i for i in plan.items if i.tier == tier]
