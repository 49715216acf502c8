"""Benchmark: focus/skip selection over 10,000 upstream names with a 200-alternative skip: winsuite vs Go.

winsuite selects with RE2 (google-re2); ginkgo selects with Go's regexp, matching each spec's
"<suite description> <spec text>" against the joined focus and skip (ginkgo's internal/focus.go). The Go side is
a throwaway program of the standard library only, built here with the Go toolchain the cluster build uses, timing
the same compile + match work on the same names, in every repetition (winsuite's cache of compiled patterns is
emptied before each); both sides must select the same names.
Names: `e2e.test --list-tests` of the pinned Kubernetes version, repeated with a suffix up to 10,000.
Goal: winsuite's selection time at most 0.1 times Go's; the exit code is 1 when it is missed or the selections differ.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from winsuite.inputs.pins import load_pins
from winsuite.inputs.regex import compile_re2
from winsuite.paths import upstream_names_file
from winsuite.policy.selection import Selector
from winsuite.policy.upstream_names import read_names_file
from winsuite_reports.conventions import SUITE_NAME

GOAL_RATIO = 0.1

GO_PROGRAM = """package main

import (
\t"bufio"
\t"encoding/json"
\t"fmt"
\t"os"
\t"regexp"
\t"strings"
\t"time"
)

func main() {
\tvar input struct{ Names, Skip []string; Suite string; Repeat int }
\tdata, _ := os.ReadFile(os.Args[1])
\tif err := json.Unmarshal(data, &input); err != nil {
\t\tpanic(err)
\t}
\tvar kept []string
\tbest := time.Duration(1 << 62)
\tfor r := 0; r < input.Repeat; r++ {
\t\tstart := time.Now()
\t\tskip := regexp.MustCompile(strings.Join(input.Skip, "|"))
\t\tkept = kept[:0]
\t\tfor _, name := range input.Names {
\t\t\tif !skip.MatchString(input.Suite + " " + name) {
\t\t\t\tkept = append(kept, name)
\t\t\t}
\t\t}
\t\tif took := time.Since(start); took < best {
\t\t\tbest = took
\t\t}
\t}
\tout := bufio.NewWriter(os.Stdout)
\tfmt.Fprintf(out, "%d\\n", best.Nanoseconds())
\tfor _, name := range kept {
\t\tfmt.Fprintln(out, name)
\t}
\tout.Flush()
}
"""


def workload(count: int, alternatives: int) -> tuple[list[str], list[str]]:
    """`count` names from the pinned list (repeated with a suffix), and a skip of `alternatives` quoted phrases."""
    upstream = read_names_file(upstream_names_file(load_pins().kubernetes))
    names = [upstream[i % len(upstream)] + (f" #{i // len(upstream)}" if i >= len(upstream) else "")
             for i in range(count)]
    phrases: dict[str, None] = {}  # distinct phrases of 4 words, spread over the list
    step = max(len(upstream) // (4 * alternatives), 1)
    for name in upstream[::step] + upstream:
        phrases.setdefault(re.escape(" ".join(name.split()[1:5])), None)
    return names, list(phrases)[:alternatives]


def winsuite_seconds(names: list[str], skip: list[str], repeat: int) -> tuple[float, list[str]]:
    """Compile and match in every repetition, as the Go side does: the compiled-pattern cache is emptied first."""
    best, kept = float("inf"), []
    for _ in range(repeat):
        compile_re2.cache_clear()
        start = time.perf_counter()
        kept = Selector(skip=skip, apply_default_skip=False).filter(names)
        best = min(best, time.perf_counter() - start)
    return best, kept


def go_seconds(names: list[str], skip: list[str], repeat: int) -> tuple[float, list[str]]:
    with tempfile.TemporaryDirectory(prefix="winsuite-bench-") as scratch:
        work = Path(scratch)
        (work / "main.go").write_text(GO_PROGRAM)
        (work / "go.mod").write_text("module benchselect\n\ngo 1.21\n")
        subprocess.run(["go", "build", "-o", "select", "."], cwd=work, check=True, capture_output=True)
        (work / "input.json").write_text(json.dumps({"Names": names, "Skip": skip, "Suite": SUITE_NAME,
                                                    "Repeat": repeat}))
        done = subprocess.run([str(work / "select"), str(work / "input.json")], check=True, capture_output=True,
                              text=True)
    first, *kept = done.stdout.splitlines()
    return int(first) / 1e9, kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--names", type=int, default=10_000)
    parser.add_argument("--alternatives", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5, help="best of N runs on each side")
    args = parser.parse_args(argv)
    names, skip = workload(args.names, args.alternatives)
    ours, our_kept = winsuite_seconds(names, skip, args.repeat)
    theirs, their_kept = go_seconds(names, skip, args.repeat)
    same = our_kept == their_kept
    ratio = ours / theirs if theirs else float("inf")
    print(f"selection of {len(names)} names, skip of {len(skip)} alternatives (best of {args.repeat}):")
    print(f"  winsuite (RE2):          {ours * 1000:8.1f} ms, {len(our_kept)} selected")
    print(f"  ginkgo's Go regexp:      {theirs * 1000:8.1f} ms, {len(their_kept)} selected")
    print(f"  ratio winsuite / Go:     {ratio:8.3f}  (goal ≤ {GOAL_RATIO})")
    print(f"  same selection:          {'yes' if same else 'NO'}")
    met = same and ratio <= GOAL_RATIO
    print("goal met" if met else "goal missed")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
