"""Regenerate tests/unit/golden/ginkgo/*/expected.txt from ginkgo itself (upstream e2e.test --ginkgo.dry-run).

Usage: python -m tests.tools.ginkgo_golden --e2e-test PATH [CASE…]
Each case's input.yaml gives focus/skip; e2e.test selects specs without touching a cluster, and the
names it would run (JUnit rows marked passed in a dry run) are written in the order of the names file.
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

from winsuite.inputs.pins import load_pins
from winsuite.paths import upstream_names_file

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests/unit/golden/ginkgo"
NAMES = upstream_names_file(load_pins().kubernetes)


def names_in_file_order() -> list[str]:
    from winsuite.policy.upstream_names import parse_list_tests

    return parse_list_tests(gzip.open(NAMES, "rt").read())


def ginkgo_selection(e2e_test: Path, focus: list[str], skip: list[str]) -> set[str]:
    with tempfile.TemporaryDirectory() as report_dir:
        args = [str(e2e_test), "--ginkgo.dry-run", "--ginkgo.no-color", f"--report-dir={report_dir}"]
        args += [f"--ginkgo.focus={f}" for f in focus] + [f"--ginkgo.skip={s}" for s in skip]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        root = ET.parse(Path(report_dir) / "junit_01.xml").getroot()
        return {
            case.get("name", "").removeprefix("[It] ")
            for case in root.iter("testcase")
            if case.get("status") == "passed" and case.get("name", "").startswith("[It] ")
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--e2e-test", type=Path, required=True)
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    order = names_in_file_order()
    for case in sorted(CASES.iterdir()):
        if args.cases and case.name not in args.cases:
            continue
        spec = yaml.safe_load((case / "input.yaml").read_text())
        selected = ginkgo_selection(args.e2e_test, spec.get("focus") or [], spec.get("skip") or [])
        # ginkgo's JUnit appends component constraints to some names ("… [kubelet: [>=1.36]]").
        decorated = [s for s in selected if s not in set(order)]
        lines = [n for n in order if n in selected or any(d.startswith(n + " [") for d in decorated)]
        (case / "expected.txt").write_text("".join(f"{n}\n" for n in lines))
        print(f"{case.name}: {len(lines)} names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
