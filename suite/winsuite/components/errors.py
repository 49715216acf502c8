"""Errors of the embedded cluster, written for the person running winsuite."""

from __future__ import annotations

from winsuite.errors import ExitCode
from winsuite.errors import UsageError


class BuildFailed(UsageError):
    """A build step failed: names the artifact, the command's log and its last lines."""

    exit_code = ExitCode.INTERNAL_ERROR


class ComponentFailed(UsageError):
    """A cluster component exited or never became ready: names it, its log file and the log's tail."""

    exit_code = ExitCode.CLUSTER_UNREACHABLE
