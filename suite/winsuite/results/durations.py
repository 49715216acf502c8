"""How long each native test took the last time it ran, per job and cluster, so a parallel phase can start the longest
first (the longest-processing-time rule): a ten-second test handed out last keeps one worker busy while the others
sit idle. One record per job on one cluster, each a file of its own in the cache directory: a test that timed out on
one cluster never reorders (or reshards) another cluster's runs, and runs on two clusters never write the same file.
A run with no record (the first, or a new test) keeps collection order for what it does not know. A record is only a
hint: unreadable, malformed or unwritable, it is ignored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from winsuite import paths
from winsuite.given_paths import Found
from winsuite.given_paths import probe
from winsuite.inputs.cluster_spec import MADE_CLUSTER_TYPES
from winsuite.policy.run_config import RunConfig
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome

DIRECTORY = "durations"  # under the cache directory, a file per record
SNAPSHOT_FILE = "winsuite-durations.json"  # in a build's artifacts: the record its phases order their tests by
MAX_ENTRIES = 20_000  # per record, the newest are kept: several catalogs and upstream lists fit
MAX_BYTES = 4 * 1024 * 1024
MAX_RECORDS = 100  # the most recently written are kept


@dataclasses.dataclass(frozen=True)
class RecordKey:
    """Whose durations a record holds: one job's on one cluster."""

    cluster: str
    job: str

    @property
    def file_name(self) -> str:
        digest = hashlib.sha256(json.dumps([self.cluster, self.job]).encode()).hexdigest()
        return f"{digest[:32]}.json"


def key_of(run: RunConfig) -> RecordKey | None:
    """The record of the run's job on its cluster. A cluster winsuite makes is known by its type and name: the kit
    remakes it alike, so the record outlives `cluster down`/`up` and a port that moved. Another is known by its API
    server and kube-system's UID (its server alone where that UID could not be read), once the run discovered it:
    None before."""
    cluster = run.job.cluster
    if cluster.type in MADE_CLUSTER_TYPES:
        return RecordKey(f"{cluster.type} cluster {cluster.name}", run.job.name)
    if run.facts is None:
        return None
    uid = f" (kube-system {run.facts.cluster_uid})" if run.facts.cluster_uid else ""
    return RecordKey(run.facts.server + uid, run.job.name)


def durations_dir() -> Path:
    return paths.cache_dir() / DIRECTORY


def snapshot(to: Path, key: RecordKey | None) -> Path:
    """The run's record as it is now, copied for one run: every process of a phase orders its collection from the
    same file (xdist needs the same order everywhere), whatever another run writes meanwhile."""
    to.write_text(json.dumps(load_record(key), separators=(",", ":")), encoding="utf-8")
    return to


def load_record(key: RecordKey | None, directory: Path | None = None) -> dict[str, float]:
    """The record of `key` (in the cache, or `directory`); empty without a key or a usable record."""
    return load((directory or durations_dir()) / key.file_name) if key is not None else {}


def load(path: Path) -> dict[str, float]:
    """{full test name: seconds} of a record or a snapshot; empty when there is none usable. A record written before
    records were kept per job and cluster (the bare mapping a snapshot still is) reads the same."""
    try:
        if path.stat().st_size > MAX_BYTES:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if isinstance(data, dict) and isinstance(data.get("durations"), dict):
        data = data["durations"]
    if not isinstance(data, dict):
        return {}
    return {name: float(seconds) for name, seconds in data.items()
            if isinstance(name, str) and isinstance(seconds, int | float) and not isinstance(seconds, bool)
            and math.isfinite(seconds) and seconds >= 0}


def record(attempts: Iterable[Attempt], key: RecordKey | None, directory: Path | None = None) -> None:
    """Remember, in the record of `key` (nothing without one), the duration of every test that ran to a verdict
    (passed or failed; skips say nothing of it)."""
    ran = {a.name: round(a.duration, 3) for a in attempts if a.outcome in (Outcome.PASSED, Outcome.FAILED)}
    if key is None or not ran:
        return
    directory = directory or durations_dir()
    path = directory / key.file_name
    merged = {name: seconds for name, seconds in load(path).items() if name not in ran} | ran
    kept = dict(list(merged.items())[-MAX_ENTRIES:])
    with contextlib.suppress(OSError):
        directory.mkdir(parents=True, exist_ok=True)
        # Written aside and renamed: a concurrent run reads the old record or the new one, never half of one.
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=".durations-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump({"cluster": key.cluster, "job": key.job, "durations": kept}, out, separators=(",", ":"))
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        _forget_oldest(directory)


def _forget_oldest(directory: Path) -> None:
    """Past MAX_RECORDS, the records written longest ago go (clusters made for a test and gone since)."""
    records = sorted(directory.glob("*.json"), key=lambda p: p.stat().st_mtime)
    for stale in records[:-MAX_RECORDS]:
        stale.unlink(missing_ok=True)


def of_job(job_dir: Path, newest: int = 5) -> dict[str, float]:
    """{full test name: seconds} from the newest stored builds of one job (`<results root>/<job>/`), the newest
    build's figure winning: what a job's shards are cut by, on any machine that holds the job's results."""
    from winsuite.results import junit

    builds = sorted((p for p in job_dir.glob("*/artifacts") if p.is_dir()), key=lambda p: p.parent.name)[-newest:]
    found: dict[str, float] = {}
    for artifacts in builds:  # oldest first: a newer build overwrites
        for path in sorted(artifacts.glob("junit_*.xml")):
            with contextlib.suppress(Exception):  # a broken build says nothing; the others still count
                found.update((a.name, round(a.duration, 3)) for a in junit.read(path)
                             if a.outcome in (Outcome.PASSED, Outcome.FAILED) and a.duration > 0)
    return found


def for_planning(job_dir: Path | None, key: RecordKey | None) -> dict[str, float]:
    """What the shard planner cuts by: the job's stored builds, over this machine's record of the job on the
    cluster."""
    stored = job_dir is not None and probe(job_dir, "results (--results-root)") is Found.DIRECTORY
    return load_record(key) | (of_job(job_dir) if job_dir is not None and stored else {})
