"""`--results` locations made local directories: a directory as it is, gs:// and s3:// through their local mirror
(winsuite_reports.mirror); what could not be read said in one line per failure, with its exit code."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from winsuite import paths
from winsuite.errors import ExitCode
from winsuite.errors import UsageError
from winsuite.errors import one_line
from winsuite_reports.mirror import Kind
from winsuite_reports.mirror import Mirror
from winsuite_reports.mirror import Unread
from winsuite_reports.mirror import mirror_dir
from winsuite_reports.store import StoreError
from winsuite_reports.store import StoreFailure
from winsuite_reports.store import is_remote
from winsuite_reports.store import parse_remote
from winsuite_reports.store_schemes import MissingClient
from winsuite_reports.store_schemes import open_store

# The exit code of each failure, and which one a report that met several exits with (the first listed).
FAILURE_EXIT = {
    StoreFailure.BUCKET_MISSING: ExitCode.RESULTS_BUCKET_MISSING,
    StoreFailure.ACCESS_DENIED: ExitCode.RESULTS_ACCESS_DENIED,
    StoreFailure.UNREACHABLE: ExitCode.RESULTS_UNREACHABLE,
    StoreFailure.THROTTLED: ExitCode.RESULTS_THROTTLED,
    StoreFailure.OBJECT_GONE: ExitCode.RESULTS_INCOMPLETE,
}
SHOWN_UNREAD = 5  # builds named per failure line before "and N more"


@dataclass
class ResultsRoot:
    """A --results location as a local directory, with the web address of each of its jobs (remote roots)."""

    location: str
    path: Path | None  # None: nothing could be read (the store failed as a whole)
    job_url: Callable[[str], str] | None = None  # job name -> the job's web address; None: link the local path
    failures: list[StoreFailure] = field(default_factory=list)


def resolve(location: str, *, max_builds: int, since: float | None) -> ResultsRoot:
    """A local directory as it is; a remote root mirrored first (each failure said on stderr, in one line)."""
    if not is_remote(location):
        return ResultsRoot(location, Path(location))
    try:
        remote = parse_remote(location)
        store = open_store(remote)
    except (ValueError, MissingClient) as err:
        raise UsageError(f"--results {err}") from None
    local = mirror_dir(paths.cache_dir() / "reports", remote, store.link(""))
    mirror = Mirror(store, remote, local, progress=_progress)
    try:
        mirrored = mirror.sync(max_builds=max_builds, since=since)
    except StoreError as err:
        _say(f"{location}: {one_line(str(err))}")
        return ResultsRoot(location, None, failures=[err.failure])
    for line in unread_lines(location, mirrored.unread):
        _say(line)
    if mirrored.kind is Kind.ROOT:
        def job_url(job: str) -> str:
            return store.link(remote.key(job))
    else:
        job_key = remote.prefix if mirrored.kind is Kind.JOB else remote.prefix.rpartition("/")[0]

        def job_url(job: str) -> str:
            return store.link(job_key)
    return ResultsRoot(location, mirrored.path, job_url, mirrored.failures())


def unread_lines(location: str, unread: list[Unread]) -> list[str]:
    """One line per failure: what happened, the first request it happened to, the builds (and jobs) not read."""
    lines = []
    for failure in dict.fromkeys(item.failure for item in unread):
        items = [item for item in unread if item.failure is failure]
        named = [f"{item.job}/{item.build}" if item.build else f"{item.job} (not listed)" for item in items]
        more = f" and {len(named) - SHOWN_UNREAD} more" if len(named) > SHOWN_UNREAD else ""
        lines.append(f"{location}: {failure.value}: {one_line(items[0].detail, 200)}; not read: "
                     f"{', '.join(named[:SHOWN_UNREAD])}{more}")
    return lines


def exit_code(failures: list[StoreFailure]) -> ExitCode:
    """The exit code of the first failure in FAILURE_EXIT's order; OK without any."""
    return next((code for failure, code in FAILURE_EXIT.items() if failure in failures), ExitCode.OK)


def _progress(line: str) -> None:
    print(f"winsuite report: {line}", file=sys.stderr, flush=True)


def _say(line: str) -> None:
    print(f"winsuite report: error: {line}", file=sys.stderr, flush=True)
