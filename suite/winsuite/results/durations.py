"""How long each native test took the last time it ran on this machine, so a parallel phase can start the longest
first (the longest-processing-time rule): a ten-second test handed out last keeps one worker busy while the others
sit idle. Kept in the cache directory; a run with no record (the first, or a new test) keeps collection order for
what it does not know. The file is only a hint: unreadable, malformed or unwritable, it is ignored.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from winsuite import paths
from winsuite.given_paths import Found
from winsuite.given_paths import probe
from winsuite.results.model import Attempt
from winsuite.results.model import Outcome

FILE = "durations.json"
SNAPSHOT_FILE = "winsuite-durations.json"  # in a build's artifacts: the record its phases order their tests by
MAX_ENTRIES = 20_000  # the newest are kept: several catalogs and upstream lists fit
MAX_BYTES = 4 * 1024 * 1024


def durations_file() -> Path:
    return paths.cache_dir() / FILE


def snapshot(to: Path) -> Path:
    """The record as it is now, copied for one run: every process of a phase orders its collection from the same
    file (xdist needs the same order everywhere), whatever another run writes meanwhile."""
    to.write_text(json.dumps(load(), separators=(",", ":")), encoding="utf-8")
    return to


def load(path: Path | None = None) -> dict[str, float]:
    """{full test name: seconds}; empty when there is no usable record."""
    path = path or durations_file()
    try:
        if path.stat().st_size > MAX_BYTES:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {name: float(seconds) for name, seconds in data.items()
            if isinstance(name, str) and isinstance(seconds, int | float) and not isinstance(seconds, bool)
            and math.isfinite(seconds) and seconds >= 0}


def record(attempts: Iterable[Attempt], path: Path | None = None) -> None:
    """Remember the duration of every test that ran to a verdict (passed or failed; skips say nothing of it)."""
    path = path or durations_file()
    ran = {a.name: round(a.duration, 3) for a in attempts if a.outcome in (Outcome.PASSED, Outcome.FAILED)}
    if not ran:
        return
    merged = {name: seconds for name, seconds in load(path).items() if name not in ran} | ran
    kept = dict(list(merged.items())[-MAX_ENTRIES:])
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written aside and renamed: a concurrent run reads the old record or the new one, never half of one.
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".durations-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(kept, out, separators=(",", ":"))
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temporary)



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


def for_planning(job_dir: Path | None) -> dict[str, float]:
    """What the shard planner cuts by: the job's stored builds, over this machine's record."""
    stored = job_dir is not None and probe(job_dir, "results (--results-root)") is Found.DIRECTORY
    return load() | (of_job(job_dir) if job_dir is not None and stored else {})
