""""Checked against upstream", checked by a machine: each Windows pod golden cites the upstream `file.go:L1-L2` it was
compared with; in k8s.io/kubernetes at the pinned version, every cited range exists, and one of them lies inside an
`It`/`Describe` of the spec the golden names (or, where the citation names helper functions, holds their
declarations). Needs the pinned module in the Go module cache (`winsuite cluster build` puts it there; CI has it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.tools.go_calls import Call
from tests.tools.go_calls import calls
from tests.tools.go_calls import func_lines
from winsuite.inputs.pins import load_pins

GOLDEN = Path(__file__).parent / "golden" / "windows_pods"
CITATION = re.compile(r"^# checked against: kubernetes (?P<version>v\S+) (?P<file>\S+\.go):(?P<ranges>[\d,-]+)"
                      r"(?: \((?P<names>[^)]*)\))?$", re.MULTILINE)
TAGS = re.compile(r" \[[^\]]*\]")
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def cited_goldens() -> list[Path]:
    return sorted(p for p in GOLDEN.glob("*.yaml") if CITATION.search(p.read_text()))


def module_cache() -> Path | None:
    """GOMODCACHE, as the go command would say it."""
    if os.environ.get("GOMODCACHE"):
        return Path(os.environ["GOMODCACHE"])
    go = shutil.which("go")
    if go is None:
        return None
    done = subprocess.run([go, "env", "GOMODCACHE"], capture_output=True, text=True, timeout=60, check=False)
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


@pytest.fixture(scope="module")
def kubernetes_module() -> Path:
    version = load_pins().kubernetes
    cache = module_cache()
    module = cache / f"k8s.io/kubernetes@{version}" if cache else None
    if module is None or not (module / "go.mod").is_file():
        pytest.skip(f"needs k8s.io/kubernetes@{version} in the Go module cache ({cache or 'no go command'}); "
                    "`winsuite cluster build` downloads it")
    return module


def ranges_of(text: str) -> list[tuple[int, int]]:
    spans = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        spans.append((int(first), int(last or first)))
    return spans


def names_the_spec(call: Call, spec: str) -> bool:
    """A call of the spec: each of its string literals is part of the spec's full name (tags left out)."""
    text = TAGS.sub("", spec)
    literals = [literal for literal in call.literals if literal.strip()]
    return bool(literals) and all(literal in text or literal in spec for literal in literals)


def test_there_are_citations_to_check() -> None:
    assert len(cited_goldens()) >= 60


@pytest.mark.parametrize("golden", cited_goldens(), ids=lambda p: p.stem)
def test_the_cited_range_exists_and_lies_in_the_spec_it_names(golden: Path, kubernetes_module: Path) -> None:
    header = golden.read_text()
    spec = header.splitlines()[0].removeprefix("# ")
    citation = CITATION.search(header)
    assert citation is not None
    assert citation["version"] == load_pins().kubernetes, "cited against another version than the pinned one"
    source = kubernetes_module / citation["file"]
    assert source.is_file(), f"{citation['file']} is not in k8s.io/kubernetes@{citation['version']}"
    text = source.read_text()
    lines = text.count("\n") + 1
    spans = ranges_of(citation["ranges"])
    assert all(1 <= first <= last <= lines for first, last in spans), f"{spans} past the file's {lines} lines"
    named = [n.strip() for n in (citation["names"] or "").split(",") if n.strip()]
    if named and all(IDENTIFIER.fullmatch(name) for name in named):  # else a note, not helper names
        declared = func_lines(text)
        for name in named:
            assert name in declared, f"{name} is not declared in {citation['file']}"
            assert any(first <= declared[name] <= last for first, last in spans), \
                f"{name} (line {declared[name]}) is outside {citation['ranges']}"
        return
    containers = [call for call in calls(text) if names_the_spec(call, spec)]
    assert containers, f"no It/Describe of {spec!r} in {citation['file']}"
    assert any(call.contains(first, last) for call in containers for first, last in spans), (
        f"{citation['ranges']} lies outside every It/Describe of {spec!r}: "
        + ", ".join(f"{c.name}{c.literals} {c.first_line}-{c.last_line}" for c in containers))


GO = '''package e2e

var _ = SIGDescribe("ConfigMap", func() {
	// It("in a comment", func() {
	framework.ConformanceIt("should be consumable (from pods)", f.WithNodeConformance(), func(ctx context.Context) {
		s := ")))" + `(` + string(')')
		_ = s
	})
})

func (c *Config) helper() {}
'''


def test_calls_span_their_parentheses_past_strings_runes_and_comments() -> None:
    found = calls(GO)
    assert [(c.name, c.literals, c.first_line, c.last_line) for c in found] == [
        ("SIGDescribe", ("ConfigMap",), 3, 9),
        ("ConformanceIt", ("should be consumable (from pods)",), 5, 8),
    ]
    assert func_lines(GO) == {"helper": 11}
