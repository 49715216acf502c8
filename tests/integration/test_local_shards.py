"""`winsuite run --shard I/N` run here one after another, as a CI matrix would, and `winsuite merge` of their builds."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.integration.runner_support import PROJECT_ROOT
from tests.integration.runner_support import WINSUITE
from tests.integration.runner_support import Build
from tests.integration.runner_support import job_dirs
from tests.integration.runner_support import run_args
from tests.tools.embedded_cluster import EmbeddedCluster
from winsuite.errors import ExitCode

pytestmark = pytest.mark.cluster

FLAKY = "[It] [sig-testing] winsuite runner flakes: fails on the first attempt and passes on the next"


def test_three_shards_merge_into_one_build_with_every_test_once(cluster: EmbeddedCluster, tmp_path: Path) -> None:
    """Three shards of the runner cases merge into one build with each test once (both attempts of the flaky one),
    and a shard given twice is refused. The wait is the three whole `winsuite run`s, one after another."""
    shards = []
    for number in (1, 2, 3):
        build_id = f"10{number}"
        subprocess.run(run_args(cluster, tmp_path / "shards", "--flake-attempts", "2", "--skip", "waits",
                                "--shard", f"{number}/3", "--build-id", build_id),
                       cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=900, check=False)
        (job,) = job_dirs(tmp_path / "shards")
        shards.append(job / build_id)
    merged = subprocess.run([*WINSUITE, "merge", *map(str, shards), "--results-root", str(tmp_path / "merged"),
                             "--build-id", "200"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120,
                            check=False)
    assert merged.returncode == ExitCode.TESTS_FAILED, merged.stdout + merged.stderr  # one test fails
    (job,) = job_dirs(tmp_path / "merged")
    build = Build(job / "200")
    rows = [r.name for junit in ("junit_01.xml", "junit_02.xml") for r in build.rows(junit)]
    per_shard = [
        {r.name for junit in ("junit_01.xml", "junit_02.xml") if (s / "artifacts" / junit).exists()
         for r in Build(s).rows(junit)} for s in shards]
    assert all(not (a & b) for i, a in enumerate(per_shard) for b in per_shard[i + 1:])  # no test in two shards
    assert set(rows) == set().union(*per_shard)
    assert rows.count(FLAKY) == 2  # both attempts of the flaky test, from its one shard
    assert [s["shard"] for s in build.finished["metadata"]["shards"]] == ["1/3", "2/3", "3/3"]
    assert json.loads((job / "latest-build.txt").read_text()) == 200
    again = subprocess.run([*WINSUITE, "merge", str(shards[0]), str(shards[0]), str(shards[2])], cwd=PROJECT_ROOT,
                           capture_output=True, text=True, timeout=120, check=False)
    assert again.returncode == ExitCode.USAGE_ERROR and "given twice" in again.stderr
