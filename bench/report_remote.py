"""Benchmark: the dashboard of a 500-build x 1,000-test history read from a local S3 server, beside the same from disk.

The history of bench/report_render.py is written to disk and uploaded to a bucket of a real S3 server on loopback
(versitygw, tests/tools/s3_server.py). Then, in one run, each timed as fetch (listings and reads, into the local
mirror), load, analysis and render:
- disk, cold: the tree on disk with no report cache;
- bucket, cold: s3:// with an empty mirror (every listing and every object the dashboard reads);
- one new build: a build added on disk and uploaded, then a report from disk (cached) and one from the bucket
  (its mirror and cache as the cold report left them): what the report at the end of a CI run costs.
The two dashboards must be byte-identical (before and after the new build), and the server's count of requests
after the new build is printed.

Goal (exit code 1 when missed): the report from the bucket after one new build, listings included, <= 1 s.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.report_render import EVERY
from bench.report_render import JOB
from bench.report_render import METADATA
from bench.report_render import identical
from bench.report_render import write_history
from tests.tools import s3_server
from winsuite.run import dashboard
from winsuite.run.results_roots import ResultsRoot
from winsuite.run.results_roots import resolve
from winsuite_reports.analysis import ReportOptions
from winsuite_reports.analysis import build_report
from winsuite_reports.render import write_dashboard
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import write_build

GOAL_NEW_BUILD_SECONDS = 1.0
BUCKET = "ci-logs"
LINKS = "https://results.example/<job>/<build>"  # one link template: the two dashboards must be the same bytes
UPLOADERS = 8


class Timing:
    def __init__(self, fetch: float, load: float, analysis: float, render: float) -> None:
        self.fetch, self.load, self.analysis, self.render = fetch, load, analysis, render

    @property
    def total(self) -> float:
        return self.fetch + self.load + self.analysis + self.render

    def line(self, label: str) -> str:
        return (f"{label:<26} fetch {self.fetch:5.2f} s   load {self.load:5.2f} s   analysis {self.analysis:5.2f} s"
                f"   render {self.render:5.2f} s   total {self.total:5.2f} s")


def measure(location: str, output: Path, *, now: float, cache: bool = True) -> Timing:
    """One report of `location` (a directory or a bucket URL), as `winsuite report` makes it, phase by phase."""
    began = time.perf_counter()
    root = resolve(location, max_builds=0, since=None) if cache else ResultsRoot(location, Path(location))
    fetched = time.perf_counter()
    if root.failures or root.path is None:
        raise SystemExit(f"bench: {location}: {root.failures}")
    history = dashboard.history_of([root]) if cache else load_history(root.path, cache=False)
    loaded = time.perf_counter()
    report = build_report(history, ReportOptions(), now=now)
    analysed = time.perf_counter()
    write_dashboard(report, output, build_url=LINKS)
    return Timing(fetched - began, loaded - fetched, analysed - loaded, time.perf_counter() - analysed)


def upload(server: s3_server.S3Server, tree: Path, prefix: str) -> int:
    """Every file under `tree` into the bucket, by several uploaders at once."""
    client = server.client()
    files = sorted(p for p in tree.rglob("*") if p.is_file() and not p.name.startswith(".winsuite"))

    def put(path: Path) -> None:
        client.fput_object(BUCKET, f"{prefix}/{path.relative_to(tree).as_posix()}", str(path))

    with ThreadPoolExecutor(UPLOADERS) as pool:
        list(pool.map(put, files))
    return len(files)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", type=int, default=500)
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=116)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        results = base / "results"
        began = time.perf_counter()
        properties = write_history(results, args.builds, args.tests, args.seed)
        print(f"history: {args.builds} builds x {args.tests} tests, written in {time.perf_counter() - began:.1f} s")
        server_binary = s3_server.build()  # from winsuite's cache, before the mirror's cache is pointed elsewhere
        os.environ.update(WINSUITE_CACHE_DIR=str(base / "cache"), AWS_EC2_METADATA_DISABLED="true",
                          AWS_SHARED_CREDENTIALS_FILE=str(base / "no-credentials"), AWS_REGION="us-east-1")
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
            os.environ.pop(name, None)
        with s3_server.running(base / "s3", server_binary) as server:
            os.environ["AWS_ENDPOINT_URL"] = server.endpoint
            server.make_bucket(BUCKET, public=True)
            began = time.perf_counter()
            objects = upload(server, results, "logs")
            print(f"bucket: {objects} objects uploaded in {time.perf_counter() - began:.1f} s ({server.endpoint})")
            url = f"s3://{BUCKET}/logs"
            now = time.time()
            disk_cold = measure(str(results), base / "disk-cold", now=now, cache=False)
            bucket_cold = measure(url, base / "bucket-cold", now=now)
            measure(str(results), base / "disk-cached", now=now)  # fills the disk's cache, as the bucket's is
            same = identical(base / "disk-cold", base / "bucket-cold")

            newest = max(int(p.name) for p in (results / JOB).iterdir() if p.is_dir())
            started = int(time.mktime(time.strptime(str(newest), "%Y%m%d%H%M%S"))) - time.timezone + EVERY
            build = write_build(results / JOB, started, dict.fromkeys(properties, "P"), metadata=METADATA,
                                properties=properties)
            upload(server, results / JOB / build, f"logs/{JOB}/{build}")
            disk_new = measure(str(results), base / "disk-new", now=now)
            before = server.requests()
            bucket_new = measure(url, base / "bucket-new", now=now)
            made = server.requests() - before
            same = same and identical(base / "disk-new", base / "bucket-new")

        print(disk_cold.line("disk, cold (no cache)"))
        print(bucket_cold.line("bucket, cold (no mirror)"))
        print(disk_new.line("disk, one new build"))
        print(bucket_new.line("bucket, one new build"))
        print(f"requests after the new build: {dict(sorted(made.items()))}")
        print(f"dashboard from the bucket and from disk (cold, and after the new build): "
              f"{'byte-identical' if same else 'DIFFERENT'}")
        met = bucket_new.total <= GOAL_NEW_BUILD_SECONDS and same
        print(f"goal (report from the bucket after one new build, listings and fetches included, <= "
              f"{GOAL_NEW_BUILD_SECONDS} s; identical to the one from disk): {'met' if met else 'MISSED'}")
        return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
