"""The prow build layout and JUnit conventions that `winsuite run` writes and the reports read, defined once.

(winsuite's results package imports these; the reports never import winsuite.)
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import re
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from pathlib import Path

# <root>/<job>/latest-build.txt and <root>/<job>/<build>/{started.json, finished.json, build-log.txt, artifacts/}
LATEST_BUILD = "latest-build.txt"
STARTED = "started.json"
FINISHED = "finished.json"
BUILD_LOG = "build-log.txt"
ARTIFACTS = "artifacts"
METADATA = "metadata.json"  # under artifacts/

# A test's tags are the bracketed words of its full name: "[sig-node] Pods … [Conformance]" -> sig-node, Conformance.
_BRACKETED = re.compile(r"\[([^\[\]]+)\]")

# What upstream e2e.test writes: one suite named after its description, rows named "[It] <full test name>".
SUITE_NAME = "Kubernetes e2e suite"
IT_PREFIX = "[It] "


# The row that compares two engines' verdicts of one test (--engine both): a self-check of winsuite, not a test of the
# product, so every count of the product's tests (the run's summary, the reports' pass rates and release verdict)
# leaves it out. Its name starts with the prefix, and its engine property is CROSS_CHECK_ENGINE.
CROSS_CHECK_PREFIX = "[winsuite] engines agree: "
CROSS_CHECK_ENGINE = "both"


def cross_check_rows(names: Iterable[str]) -> list[str]:
    """The cross-check rows among `names` (full test names, or the reports' row keys: the same without `[It] `), in
    their order. Told by the name, which every reader has (a stored grid keeps no properties); by C-level maps, as a
    big tab has a hundred thousand rows."""
    names = list(names)
    return list(itertools.compress(names, map(str.startswith, names, itertools.repeat(CROSS_CHECK_PREFIX))))


def junit_name(phase: int) -> str:
    """junit_01.xml for the parallel phase, junit_02.xml for the serial one (what TestGrid globs)."""
    return f"junit_{phase:02d}.xml"


def artifacts_dir(build_dir: Path) -> Path:
    return build_dir / ARTIFACTS


def tags_in_name(full_name: str) -> tuple[str, ...]:
    return tuple(_BRACKETED.findall(full_name))


def tags_in_names(full_names: Iterable[str]) -> Iterator[tuple[str, ...]]:
    """tags_in_name of each name, by C-level maps (a big run has a hundred thousand rows)."""
    return map(tuple, map(_BRACKETED.findall, full_names))


class RowProperty(enum.StrEnum):
    """The testcase-level properties winsuite writes on a JUnit row (TestGrid keeps them; the dashboard reads them),
    in the order they are written."""

    ENGINE = "engine"  # native, upstream, or both (a cross-check row); rows without it are native
    OPS_READINESS_CASE = "ops-readiness-case"  # the windows-operational-readiness case(s) that selected the row
    ATTEMPT = "attempt"
    TAGS = "tags"
    TIER = "tier"
    CATEGORY = "category"
    PLAN_ITEMS = "plan-items"
    DIAGNOSTICS = "diagnostics"  # the failed attempt's diagnostics, relative to the build directory
    EXCLUDED = "excluded"  # the exclusion that skips (or, with --run-excluded, would skip) the test
    INTERRUPTED = "interrupted"
    TIMED_OUT = "timed-out"
    FAILURE_CLASS = "failure-class"  # why a failed or interrupted row failed (FailureClass)
    FAILURE_EVIDENCE = "failure-evidence"  # what was observed that decided the class
    RAN_ON = "ran-on"  # the nodes its pods ran on: name (os, build, runtime), ...


class FailureClass(enum.StrEnum):
    """Why a failed or interrupted row failed, decided by what was observed (never by the message alone)."""

    INFRASTRUCTURE = "infrastructure"  # an image that did not pull, a node lost, the API server or DNS not answering
    SETUP = "setup"  # the test's namespace, service account or fixture (or ginkgo's BeforeSuite) did not come up
    TIMEOUT = "timeout"  # the per-test or the run timeout cut it off
    TEST = "test"  # an assertion failed: the default when nothing else was observed


_TRUE = "true"


@dataclasses.dataclass(frozen=True)
class RowProperties:
    """A row's properties, typed; `to_junit` and `from_junit` are their one spelling in JUnit."""

    engine: str = ""
    ops_readiness_case: str = ""
    tags: tuple[str, ...] = ()
    tier: str = ""
    category: str = ""
    plan_items: tuple[str, ...] = ()
    diagnostics: str = ""
    excluded: str = ""
    interrupted: bool = False
    timed_out: bool = False
    failure_class: str = ""  # a FailureClass value, on failed and interrupted rows
    failure_evidence: str = ""
    ran_on: str = ""

    def to_junit(self, attempt: int) -> dict[str, str]:
        """The properties as JUnit writes them (empty ones left out), in RowProperty order."""
        written = {
            RowProperty.ENGINE: self.engine, RowProperty.OPS_READINESS_CASE: self.ops_readiness_case,
            RowProperty.ATTEMPT: str(attempt), RowProperty.TAGS: ",".join(self.tags), RowProperty.TIER: self.tier,
            RowProperty.CATEGORY: self.category, RowProperty.PLAN_ITEMS: ",".join(self.plan_items),
            RowProperty.DIAGNOSTICS: self.diagnostics, RowProperty.EXCLUDED: self.excluded,
            RowProperty.INTERRUPTED: _TRUE if self.interrupted else "",
            RowProperty.TIMED_OUT: _TRUE if self.timed_out else "",
            RowProperty.FAILURE_CLASS: self.failure_class, RowProperty.FAILURE_EVIDENCE: self.failure_evidence,
            RowProperty.RAN_ON: self.ran_on,
        }
        return {str(key): str(value) for key, value in written.items() if value}

    @staticmethod
    def from_junit(properties: Mapping[str, str]) -> RowProperties:
        """What a row's JUnit properties say (properties of other tools are ignored)."""
        get = properties.get
        return RowProperties(
            engine=get(RowProperty.ENGINE, ""), ops_readiness_case=get(RowProperty.OPS_READINESS_CASE, ""),
            tags=split_list(get(RowProperty.TAGS, "")), tier=get(RowProperty.TIER, ""),
            category=get(RowProperty.CATEGORY, ""), plan_items=split_list(get(RowProperty.PLAN_ITEMS, "")),
            diagnostics=get(RowProperty.DIAGNOSTICS, ""), excluded=get(RowProperty.EXCLUDED, ""),
            interrupted=get(RowProperty.INTERRUPTED) == _TRUE, timed_out=get(RowProperty.TIMED_OUT) == _TRUE,
            failure_class=get(RowProperty.FAILURE_CLASS, ""), failure_evidence=get(RowProperty.FAILURE_EVIDENCE, ""),
            ran_on=get(RowProperty.RAN_ON, ""))


def split_list(value: str) -> tuple[str, ...]:
    """A comma-separated property value (tags, plan-items) as its parts."""
    return tuple(part.strip() for part in value.split(",") if part.strip())
