"""The machine's live processes as /proc shows them, for tests that check which processes a run leaves."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class Seen:
    parent: int
    group: int
    name: str  # /proc/<pid>/comm
    started: int  # clock ticks after boot: a recycled pid is another process


def live() -> dict[int, Seen]:
    """Every process but the zombies, by pid."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue  # gone meanwhile
            name, _, rest = stat.partition(" (")[2].rpartition(") ")  # a name may hold ") "
            fields = rest.split()
            if fields[0] != "Z":
                found[int(entry.name)] = Seen(int(fields[1]), int(fields[2]), name, int(fields[19]))
    return found


def descendants(pid: int) -> dict[int, Seen]:
    """The processes below `pid` now (those whose parent died meanwhile are no longer below it)."""
    processes = live()
    tree: dict[int, Seen] = {}
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for child, seen in processes.items():
            if seen.parent == parent and child not in tree:
                tree[child] = seen
                frontier.append(child)
    return tree


def still_running(seen: dict[int, Seen]) -> list[str]:
    """Which of the processes seen earlier still run (`<pid> <name>`)."""
    now = live()
    return [f"{pid} {was.name}" for pid, was in seen.items() if pid in now and now[pid].started == was.started]


def in_group(group: int) -> dict[int, Seen]:
    return {pid: seen for pid, seen in live().items() if seen.group == group}


def wait_until(condition: Callable[[], object], timeout: float, interval: float = 0.05) -> bool:
    """Whether `condition` came true within `timeout` seconds: /proc (or the cluster) polled, nothing to watch."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return False
