"""The prow build layout and JUnit conventions that `winsuite run` writes and the reports read, defined once.

(winsuite's results package imports these; the reports never import winsuite.)
"""

from __future__ import annotations

import re
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


def junit_name(phase: int) -> str:
    """junit_01.xml for the parallel phase, junit_02.xml for the serial one (what TestGrid globs)."""
    return f"junit_{phase:02d}.xml"


def artifacts_dir(build_dir: Path) -> Path:
    return build_dir / ARTIFACTS


def tags_in_name(full_name: str) -> tuple[str, ...]:
    return tuple(_BRACKETED.findall(full_name))
