"""Benchmark: N malformed inputs through the winsuite CLI, per kind of input (job, exclusion list, repo list as a
flag and as KUBE_TEST_REPO_LIST, kubeconfig, ops-readiness specification, stored results read by `report` and by
`run --rerun-failed`). Prints tried / clean / traceback / wrong exit code / hang per kind; exit 1 when any case
is not clean. First, the path cases of every kind: a valid file in a directory that cannot be entered (read as a
user without root's override of permissions), under a name longer than the file system allows, and at a path longer
than the system allows; each must be a usage error (exit 4) whose one line names the file.

Each case runs `winsuite` in a forked copy of a process that has imported it once (a fresh interpreter per case
would spend its time importing), with stdout/stderr captured and a deadline: a case that has not ended by then
is a hang. Name resolution is kept to loopback in the children (a mutated kubeconfig may name any host).

    python -m bench.fuzz_inputs --cases 2000 [--seed 1] [--kind job] [--show 5]
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

from tests.tools.fuzz_inputs import KINDS
from tests.tools.fuzz_inputs import PATH_CASES
from tests.tools.fuzz_inputs import Case
from tests.tools.fuzz_inputs import describe
from tests.tools.fuzz_inputs import expected
from tests.tools.fuzz_inputs import keep_to_loopback
from tests.tools.fuzz_inputs import materialize
from tests.tools.fuzz_inputs import run_cli
from tests.tools.fuzz_mutations import mutate
from tests.tools.fuzz_mutations import path_case

HANG_SECONDS = 30.0
COLUMNS = ("tried", "certainly bad", "clean", "traceback", "wrong exit code", "bad input accepted",
           "no one-line error", "hang")


def run_case(case: Case, deadline: float) -> tuple[str | None, str]:
    """(what went wrong or None, the case's stderr) for one case run in a forked child."""
    with tempfile.TemporaryDirectory(prefix="winsuite-fuzz-") as scratch_dir:
        scratch = Path(scratch_dir)
        argv, env = materialize(case, scratch)
        err_path = scratch / "stderr"
        pid = os.fork()
        if pid == 0:  # the child: run the CLI, report through the exit status and the stderr file
            code = 70
            try:
                code, stderr = run_cli(argv, env, unprivileged=case.mutation == "unreadable-directory")
                err_path.write_text(stderr)
            finally:
                os._exit(code)
        end = time.monotonic() + deadline
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > end:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "hang", ""
            time.sleep(0.005)
        code = os.waitstatus_to_exitcode(status)
        stderr = err_path.read_text() if err_path.exists() else ""
        if code == 70 and not stderr:
            return "traceback", "the child died before writing its stderr"
        return expected(case, code, stderr), stderr


def warm_up(kinds: list[str]) -> None:
    """Each kind's command once in this process, so every forked case starts with winsuite imported and its
    packaged data (catalog, plan, upstream names) loaded, as one long-lived process would have them."""
    rng = random.Random(0)
    for kind in kinds:
        with tempfile.TemporaryDirectory(prefix="winsuite-fuzz-") as scratch:
            argv, env = materialize(mutate(KINDS[kind], rng), Path(scratch))
            run_cli(argv, env)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000, help="cases in all, spread evenly over the kinds")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kind", action="append", choices=sorted(KINDS), help="only these kinds")
    parser.add_argument("--show", type=int, default=3, help="examples to print of each kind of defect")
    parser.add_argument("--deadline", type=float, default=HANG_SECONDS, help="seconds before a case is a hang")
    args = parser.parse_args()
    with keep_to_loopback():
        return run_cases(args)


def run_path_cases(kinds: list[str], deadline: float) -> int:
    """Every kind at every path that cannot be read: a table of kinds x path cases, each cell ok or what went
    wrong; returns the number of cases that were not clean."""
    print("path cases (exit 4, one line naming the file)")
    width = max(map(len, kinds)) + 2
    print("kind".ljust(width) + "".join(f"{name:>24}" for name in PATH_CASES))
    bad: list[str] = []
    for kind in kinds:
        cells = []
        for name in PATH_CASES:
            case = path_case(KINDS[kind], name)
            problem, stderr = run_case(case, deadline)
            cells.append(problem or "ok")
            if problem:
                bad.append(f"{describe(case)}\n    -> {stderr.strip()[-400:]}")
        print(kind.ljust(width) + "".join(f"{cell:>24}" for cell in cells))
    print(f"{len(kinds) * len(PATH_CASES)} path cases, {len(bad)} not clean (internal errors included)")
    for example in bad:
        print(f"  {example}")
    print()
    return len(bad)


def run_cases(args: argparse.Namespace) -> int:
    kinds = args.kind or sorted(KINDS)
    warm_up(kinds)
    path_problems = run_path_cases(kinds, args.deadline)
    rng = random.Random(args.seed)
    table: dict[str, collections.Counter[str]] = {kind: collections.Counter() for kind in kinds}
    examples: dict[str, list[str]] = collections.defaultdict(list)
    started = time.monotonic()
    for index in range(args.cases):
        kind = kinds[index % len(kinds)]
        case = mutate(KINDS[kind], random.Random(rng.getrandbits(64)))
        problem, stderr = run_case(case, args.deadline)
        table[kind]["tried"] += 1
        table[kind]["certainly bad"] += case.certainly_bad
        table[kind][problem or "clean"] += 1
        if problem and len(examples[problem]) < args.show:
            examples[problem].append(f"{describe(case)}\n    -> {stderr.strip()[-400:]}")
    elapsed = time.monotonic() - started

    width = max(map(len, kinds)) + 2
    print("kind".ljust(width) + "".join(f"{column:>19}" for column in COLUMNS))
    total: collections.Counter[str] = collections.Counter()
    for kind in kinds:
        total.update(table[kind])
        print(kind.ljust(width) + "".join(f"{table[kind][column]:>19}" for column in COLUMNS))
    print("all".ljust(width) + "".join(f"{total[column]:>19}" for column in COLUMNS))
    print(f"{total['tried']} cases in {elapsed:.1f} s ({elapsed / max(total['tried'], 1) * 1000:.0f} ms each)")
    for problem, found in examples.items():
        print(f"\n{problem}:")
        for example in found:
            print(f"  {example}")
    return 0 if total["clean"] == total["tried"] and not path_problems else 1


if __name__ == "__main__":
    sys.exit(main())
