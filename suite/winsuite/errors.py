"""Errors meant for the person running winsuite, and the documented exit codes."""

from __future__ import annotations

import enum
import reprlib


class ExitCode(enum.IntEnum):
    """Exit codes of the `winsuite` CLI (documented in the README)."""

    OK = 0
    TESTS_FAILED = 1
    INTERRUPTED = 2
    INTERNAL_ERROR = 3
    USAGE_ERROR = 4
    NO_TESTS_SELECTED = 5
    CLUSTER_UNREACHABLE = 6
    TIMED_OUT = 7
    LINT_FAILED = 8
    RESULTS_INCOMPLETE = 9  # a remote results root: an object listed was gone when read (those builds not read)
    RESULTS_ACCESS_DENIED = 10
    RESULTS_BUCKET_MISSING = 11
    RESULTS_UNREACHABLE = 12  # the object store could not be reached (or was lost during the report)
    RESULTS_THROTTLED = 13  # still throttled after retries with backoff


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict, _REPR.maxstring, _REPR.maxother = 3, 4, 4, 60, 60


def shown(value: object) -> str:
    """A value of the user's file as an error shows it: repr, bounded in depth and length (a value made of YAML
    aliases can stand for millions of elements, and its full repr would never end)."""
    return _REPR.repr(value)


def one_line(text: str, limit: int = 400) -> str:
    """`text` as one line of at most `limit` characters: what the user sees of an error (a value's repr can be
    megabytes long, and an exception's text can span lines)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class UsageError(Exception):
    """A user mistake: printed as one line (input, location, fix), never as a traceback."""

    exit_code = ExitCode.USAGE_ERROR


class DataError(UsageError):
    """A bad data file: names the file, the field and what is allowed."""

    def __init__(self, path: object, field: str, problem: str) -> None:
        self.path = str(path)
        self.field = field
        self.problem = problem
        where = f"{self.path}: {field}" if field else self.path
        super().__init__(f"{where}: {problem}")


class NothingSelected(UsageError):
    """The selection holds no test: nothing to run (exit 5, as a run that selects nothing)."""

    exit_code = ExitCode.NO_TESTS_SELECTED


class ClusterUnreachable(UsageError):
    """The cluster could not be reached: says which server and which error."""

    exit_code = ExitCode.CLUSTER_UNREACHABLE
