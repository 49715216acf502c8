"""Component and build logs: the tail shown when something fails, and copies for a run's artifacts."""

from __future__ import annotations

import shutil
from collections import deque
from pathlib import Path


def tail(path: Path, lines: int = 15) -> str:
    """The last lines of a log, indented for an error message ('' when there is no log)."""
    try:
        with path.open(errors="replace") as handle:
            last = deque(handle, maxlen=lines)
    except OSError:
        return ""
    return "".join(f"    {line.rstrip()}\n" for line in last).rstrip("\n")


def copy_logs(source: Path, dest: Path) -> list[Path]:
    """Copy every *.log under source into dest (flattened by name); returns the copies."""
    dest.mkdir(parents=True, exist_ok=True)
    copies = []
    for log in sorted(source.glob("*.log")):
        target = dest / log.name
        shutil.copyfile(log, target)
        copies.append(target)
    return copies
