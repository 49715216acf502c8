"""Policy as data (STYLE §4): every tests/unit/golden/<kind>/<case>/input.yaml against its expected.txt.

- golden/jobs/<case>/: a bad job file (and any list it names); expected: the one error line `winsuite list
  --job` prints.
- golden/selection/<case>/: a job and/or focus/skip/exclusions; expected: the rendered selection of the
  upstream names (jobs/upstream-names/) or of winsuite's catalog, `run|skip|out  <name>  (reason)`.
- golden/run_document/<case>/: what `winsuite run` is given (a job file, the environment, flags); expected: the
  resolved run it writes as artifacts/run.json, with placeholders for what differs between runs.
Fields of each kind: the README.md next to the cases. `pytest --update-golden` rewrites expected.txt.
Dates in input.yaml may be written `<today>`, `<today+N>` or `<today-N>` (days), and are rendered back so.
"""

from __future__ import annotations

import datetime
import functools
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml

from winsuite import cli
from winsuite.authoring.naming import Tag
from winsuite.errors import ExitCode
from winsuite.inputs.jobs import ENVIRONMENT
from winsuite.inputs.jobs import load_job
from winsuite.inputs.pins import load_pins
from winsuite.paths import upstream_names_file
from winsuite.policy.catalog import collect
from winsuite.policy.exclusions import API_VERSION
from winsuite.policy.exclusions import KIND
from winsuite.policy.exclusions import ScopeFacts
from winsuite.policy.exclusions import load_exclusions
from winsuite.policy.run_config import RunConfig
from winsuite.policy.selection import Outcome
from winsuite.policy.selection import Policy
from winsuite.policy.selection import Selector
from winsuite.policy.upstream_names import read_names_file
from winsuite.run.request import resolve_request

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"
SELECTION_KEYS = {"names", "job", "focus", "skip", "nodeOS", "exclusions", "facts", "runExcluded", "show"}
FACT_KEYS = {"kubernetesVersion", "windowsBuilds", "cni", "containerRuntimes"}
STATUS = {Outcome.RUN: "run", Outcome.SKIP: "skip", Outcome.DESELECT: "out"}
_PLACEHOLDER = re.compile(r"<today([+-]\d+)?>")


def cases(kind: str) -> list[Path]:
    return sorted(p for p in (GOLDEN / kind).iterdir() if (p / "input.yaml").is_file())


def compare(case: Path, actual: str, config: pytest.Config) -> None:
    expected = case / "expected.txt"
    if config.getoption("--update-golden"):
        expected.write_text(actual)
        return
    assert expected.is_file(), f"{expected} is missing; create it with `pytest {__file__} --update-golden`"
    assert actual == expected.read_text(), f"{case.name}: output differs (`--update-golden` rewrites expected.txt)"


def with_dates(text: str, today: datetime.date) -> tuple[str, dict[str, str]]:
    """The text with date placeholders filled in, and date -> placeholder to render them back."""
    back: dict[str, str] = {}

    def fill(match: re.Match[str]) -> str:
        date = (today + datetime.timedelta(days=int(match.group(1) or 0))).isoformat()
        back[date] = match.group(0)
        return date

    return _PLACEHOLDER.sub(fill, text), back


# --- bad jobs ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", cases("jobs"), ids=lambda p: p.name)
def test_bad_job_gives_one_error_line(
    case: Path, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    for variable in ENVIRONMENT:
        monkeypatch.delenv(variable, raising=False)
    where = case.relative_to(ROOT)
    code = cli.main(["list", "--job", str(where / "input.yaml")])
    out, err = capsys.readouterr()
    err = err.replace(f"{ROOT}/", "")
    assert (code, out) == (ExitCode.USAGE_ERROR, "")
    assert err.startswith("winsuite: error: ")
    assert f"{where}/" in err  # names the file: the job or a list it names
    assert err.count("\n") == 1
    compare(case, err, request.config)


# --- selection -------------------------------------------------------------------------------------------------
@functools.cache
def upstream_universe() -> list[tuple[str, tuple[Tag, ...]]]:
    names = read_names_file(upstream_names_file(load_pins().kubernetes))
    return [(name, tuple(Tag(label) for label in re.findall(r"\[([^\[\]]+)\]", name))) for name in names]


@functools.cache
def catalog_universe() -> list[tuple[str, tuple[Tag, ...]]]:
    return [(entry.spec.full_name, entry.spec.tags) for entry in collect()]


def policy_of(spec: dict[str, Any], case: Path, tmp_path: Path) -> Policy:
    job = load_job(case / spec["job"]) if "job" in spec else None
    files = list(job.exclusions) if job else []
    if spec.get("exclusions"):
        inline = tmp_path / "exclusions.yaml"
        inline.write_text(yaml.safe_dump({"apiVersion": API_VERSION, "kind": KIND, "exclusions": spec["exclusions"]}))
        files.append(str(inline))
    return Policy(
        selector=Selector(tuple(spec.get("focus", job.focus if job else ())),
                          tuple(spec.get("skip", job.skip if job else ()))),
        target_os=spec.get("nodeOS", job.node_os if job else "windows"),
        exclusions=load_exclusions(files),
        facts=facts_of(spec.get("facts")),
        run_excluded=spec.get("runExcluded", job.run_excluded if job else False),
    )


def facts_of(raw: dict[str, Any] | None) -> ScopeFacts | None:
    if raw is None:
        return None

    def listed(key: str) -> frozenset[str] | None:
        return frozenset(raw[key]) if key in raw else None

    return ScopeFacts(
        raw.get("kubernetesVersion"), listed("windowsBuilds"), raw.get("cni"), listed("containerRuntimes")
    )


def render(universe: Iterable[tuple[str, tuple[Tag, ...]]], policy: Policy, show: list[str]) -> str:
    lines, counts = [], dict.fromkeys(STATUS.values(), 0)
    for name, tags in universe:
        verdict = policy.decide(name, tags)
        status = STATUS[verdict.outcome]
        counts[status] += 1
        reason = verdict.reason
        if verdict.outcome is Outcome.RUN and verdict.exclusion is not None:
            reason = f"--run-excluded: {verdict.exclusion.skip_reason()}"
        if status in show:
            lines.append(f"{status}  {name}" + (f"  ({reason})" if reason else ""))
    # Not the `out` count: it is the rest of the universe, and would change with every test the catalog gains.
    lines.append(f"# {counts['run']} run, {counts['skip']} skip")
    return "".join(f"{line}\n" for line in lines)


@pytest.mark.parametrize("case", cases("selection"), ids=lambda p: p.name)
def test_selection(case: Path, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    text, back = with_dates((case / "input.yaml").read_text(), datetime.date.today())
    spec = yaml.safe_load(text) or {}
    assert set(spec) <= SELECTION_KEYS, f"{case}/input.yaml: unknown keys {sorted(set(spec) - SELECTION_KEYS)}"
    assert set(spec.get("facts") or {}) <= set(FACT_KEYS), f"{case}/input.yaml: facts keys are {sorted(FACT_KEYS)}"
    assert set(spec.get("show", [])) <= set(STATUS.values()), f"{case}/input.yaml: show takes run, skip, out"
    universe = {"upstream": upstream_universe, "catalog": catalog_universe}[spec.get("names", "upstream")]()
    actual = render(universe, policy_of(spec, case, tmp_path), spec.get("show", list(STATUS.values())))
    for date, placeholder in back.items():
        actual = actual.replace(date, placeholder)
    compare(case, actual, request.config)


# --- run documents -------------------------------------------------------------------------------------------
RUN_DOCUMENT_KEYS = {"job", "env", "args"}


def render_run_document(run: RunConfig, placeholders: dict[str, str]) -> str:
    """The run document as artifacts/run.json has it, but the content of the data files it carries (the image
    catalog, the exclusion entries, the repo list's text): their own goldens and tests cover them; here their
    sources say which files the resolution chose."""
    document = run.to_document()
    document["images"] = {"source": document["images"]["source"], "images": "<the catalog's images>"}
    document["exclusions"] = [f"{e['source']} ({e['id'] or e['name'] or e['pattern']})" for e in document["exclusions"]]
    document["repo_list"]["text"] = "<the file's text>"
    text = json.dumps(document, indent=1) + "\n"
    for value, placeholder in placeholders.items():
        text = text.replace(value, placeholder)
    return text


@pytest.mark.parametrize("case", cases("run_document"), ids=lambda p: p.name)
def test_run_document(case: Path, request: pytest.FixtureRequest, tmp_path: Path,
                      monkeypatch: pytest.MonkeyPatch) -> None:
    spec = yaml.safe_load((case / "input.yaml").read_text()) or {}
    assert set(spec) <= RUN_DOCUMENT_KEYS, f"{case}/input.yaml: unknown keys {sorted(set(spec) - RUN_DOCUMENT_KEYS)}"
    monkeypatch.chdir(tmp_path)
    for variable in ENVIRONMENT:
        monkeypatch.delenv(variable, raising=False)
    for variable, value in (spec.get("env") or {}).items():
        monkeypatch.setenv(variable, str(value).replace("<case>", str(case)).replace("<tmp>", str(tmp_path)))
    job = ["--job", str(case / spec["job"])] if "job" in spec else []
    run = resolve_request(cli.build_parser("run").parse_args(["run", *job, *spec.get("args", [])]))
    # Longest first: the case directory is inside the repository, the run id starts with the build id. A build id
    # is new for every run unless the build directory was given (its name).
    placeholders = {str(case): "<case>", str(ROOT): "<repo>", str(tmp_path): "<tmp>", run.run_id: "<run-id>"}
    if run.layout.job_dir is not None:
        placeholders[run.layout.build_id] = "<build-id>"
    compare(case, render_run_document(run, placeholders), request.config)
