"""The documentation stays whole: a short README that links every page under docs/ and lists every exit code, links
that lead somewhere, and a flags page that names every flag of the real CLI parser and every key the real job reader
accepts."""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from winsuite.cli import build_parser
from winsuite.errors import DataError
from winsuite.errors import ExitCode
from winsuite.errors import UsageError
from winsuite.inputs.jobs import load_job

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
FLAGS_PAGE = DOCS / "flags-and-job-fields.md"
MAX_README_LINES = 300
HELP = {"-h", "--help"}

_FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)
_PROBE = "winsuiteDocsProbe"


def _pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def _links(page: Path) -> list[str]:
    """The targets of a page's markdown links, code blocks and code spans left out."""
    text = _CODE_SPAN.sub("", _FENCE.sub("", page.read_text(encoding="utf-8")))
    return _LINK.findall(text)


def _is_relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target)


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats
    numbered."""
    anchors: set[str] = set()
    seen: Counter[str] = Counter()
    for heading in _HEADING.findall(_FENCE.sub("", page.read_text(encoding="utf-8"))):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        anchors.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
        seen[slug] += 1
    return anchors


def test_the_readme_is_short() -> None:
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines; move reference material to docs/"


def test_the_readme_lists_every_exit_code_once() -> None:
    section = README.read_text(encoding="utf-8").split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    codes = [int(code) for code in re.findall(r"^\| (\d+) \|", section, re.MULTILINE)]
    assert codes == sorted(int(code) for code in ExitCode)


def test_every_docs_page_is_linked_from_the_readme() -> None:
    pages = sorted(DOCS.glob("*.md"))
    assert pages, "no pages under docs/"
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in _links(README) if _is_relative(target)}
    unlinked = [str(page.relative_to(ROOT)) for page in pages if page.resolve() not in linked]
    assert unlinked == [], f"docs pages the README does not link: {', '.join(unlinked)}"


@pytest.mark.parametrize("page", _pages(), ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading(page: Path) -> None:
    broken = []
    for target in filter(_is_relative, _links(page)):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.is_file():
            broken.append(f"{target} (no such file)")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(f"{target} (no such heading)")
    assert broken == [], f"{page.relative_to(ROOT)}: broken links: {', '.join(broken)}"


def _flags(parser: argparse.ArgumentParser, command: tuple[str, ...] = ()) -> dict[str, set[str]]:
    """Every option string of every subcommand (help left out), with the subcommands that take it."""
    flags: dict[str, set[str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, subparser in action.choices.items():
                for flag, commands in _flags(subparser, (*command, name)).items():
                    flags.setdefault(flag, set()).update(commands)
        for flag in set(action.option_strings) - HELP:
            flags.setdefault(flag, set()).add(" ".join(command))
    return flags


def _subcommands(parser: argparse.ArgumentParser, command: tuple[str, ...] = ()) -> list[str]:
    """Every subcommand that takes arguments of its own (not only further subcommands), as `run`, `cluster up`."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, subparser in action.choices.items():
                found.extend(_subcommands(subparser, (*command, name)))
    return found or [" ".join(command)]


def _names_flag(text: str, flag: str) -> bool:
    """The page shows the flag at the start of a code span: `--flag`, `--flag VALUE`, `-n N`."""
    return re.search(r"`" + re.escape(flag) + r"(?=[`\s=…])", text) is not None


def test_every_cli_flag_is_on_the_flags_page() -> None:
    text = FLAGS_PAGE.read_text(encoding="utf-8")
    flags = _flags(build_parser())
    assert "--kubeconfig" in flags  # the walk reaches the subcommands
    missing = [f"{flag} ({', '.join(sorted(commands))})" for flag, commands in sorted(flags.items())
               if not _names_flag(text, flag)]
    assert missing == [], f"flags missing from {FLAGS_PAGE.relative_to(ROOT)}: {'; '.join(missing)}"


def test_every_subcommand_is_on_the_flags_page() -> None:
    text = FLAGS_PAGE.read_text(encoding="utf-8")
    commands = _subcommands(build_parser())
    assert "cluster up" in commands
    missing = [command for command in commands if f"`winsuite {command}" not in text]
    assert missing == [], f"subcommands missing from {FLAGS_PAGE.relative_to(ROOT)}: {', '.join(missing)}"


def _known_keys(job: Path, mapping: tuple[str, ...]) -> list[str] | None:
    """The keys the job reader accepts in `mapping` (a path of keys; () for the top level), read from its refusal
    of an unknown key there; None when the value there is not a mapping."""
    document: object = {_PROBE: 1}
    for key in reversed(mapping):
        document = {key: document}
    job.write_text(yaml.safe_dump(document), encoding="utf-8")
    try:
        load_job(job)
    except UsageError as refusal:
        if isinstance(refusal, DataError) and refusal.field == ".".join((*mapping, _PROBE)):
            return refusal.problem.removeprefix("unknown key; known keys: ").split(", ")
    return None


def _job_fields(job: Path, mapping: tuple[str, ...] = ()) -> list[str]:
    """Every field a job file may hold; a mapping's fields dotted (`cluster.type`) in its place."""
    keys = _known_keys(job, mapping)
    assert keys is not None, f"{'.'.join(mapping) or 'a job'}: not read as a mapping"
    fields = []
    for key in keys:
        path = (*mapping, key)
        fields.extend(_job_fields(job, path) if _known_keys(job, path) is not None else [".".join(path)])
    return fields


def test_every_job_field_is_on_the_flags_page(tmp_path: Path) -> None:
    text = FLAGS_PAGE.read_text(encoding="utf-8")
    section = text.split("\n## Job fields\n", 1)[1].split("\n## ", 1)[0]
    fields = _job_fields(tmp_path / "job.yaml")
    assert {"name", "cluster.type", "timeouts.run", "placement.windowsTaint.effect"} <= set(fields)
    missing = [field for field in fields if f"`{field}`" not in section]
    assert missing == [], f"job fields missing from {FLAGS_PAGE.relative_to(ROOT)} (Job fields): {', '.join(missing)}"
