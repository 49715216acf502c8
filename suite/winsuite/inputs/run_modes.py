"""Closed sets of how a run goes: which of its phases a process runs, and when it collects node logs."""

from __future__ import annotations

import enum


class Phase(enum.StrEnum):
    """Which of the run's tests one pytest process runs."""

    ALL = "all"
    PARALLEL = "parallel"  # the parallel-safe tests (phase 1)
    SERIAL = "serial"  # [Serial] and [Disruptive] tests, one at a time (phase 2)

    @property
    def number(self) -> int:
        """Which JUnit file its rows go to (junit_01.xml, junit_02.xml)."""
        return 2 if self is Phase.SERIAL else 1


class NodeLogMode(enum.StrEnum):
    """When a run collects its nodes' kubelet, runtime and kube-proxy logs (--collect-node-logs)."""

    ON_FAILURE = "on-failure"
    ALWAYS = "always"
    NEVER = "never"
