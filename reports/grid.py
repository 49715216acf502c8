"""A tab's grid as compact data for the page's script: run-length encoded rows over a shared string table.

500 builds x 1,000 tests is half a million cells; as HTML that is megabytes, as runs of equal cells
(TestGrid stores its grid the same way) a healthy row is a dozen bytes. Each row is a flat list of runs,
five integers each: status code, length, message, diagnostics path, icon (the last three index `strings`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Iterable
from urllib.parse import quote

from winsuite_reports import environment
from winsuite_reports.environment import recorded_axes
from winsuite_reports.model import Build
from winsuite_reports.model import Cell
from winsuite_reports.model import Job
from winsuite_reports.model import Status

# The script indexes this string with each run's status code.
CODES = "".join(status.value for status in Status)
_CODE = {status: i for i, status in enumerate(Status)}


class StringTable:
    """Every message, path and label once; index 0 is the empty string."""

    def __init__(self) -> None:
        self.strings: list[str] = [""]
        self._index: dict[str, int] = {"": 0}

    def __call__(self, text: str) -> int:
        index = self._index.get(text)
        if index is None:
            index = self._index[text] = len(self.strings)
            self.strings.append(text)
        return index


def encode_row(row_runs: Iterable[tuple[Cell, int]], strings: StringTable) -> list[int]:
    """A row given as runs of (cell, length), equal neighbours joined."""
    runs: list[int] = []
    previous: Cell | None = None
    for cell, length in row_runs:
        if cell is previous or cell == previous:
            runs[-4] += length
            continue
        previous = cell
        diagnostics = quote(cell.diagnostics, safe="/") if cell.diagnostics else ""
        runs += [_CODE[cell.status], length, strings(cell.message), strings(diagnostics), strings(cell.icon)]
    return runs


def column_time(epoch: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(epoch)) if epoch else "—"


def short_time(epoch: int) -> str:
    """A column's start in a rotated header: month, day and time (the year is in the title)."""
    return time.strftime("%m-%d %H:%M", time.gmtime(epoch)) if epoch else "—"


def grid_data(job: Job, build_href: Callable[[Build], str], columns: int) -> dict[str, object]:
    """The JSON the grid page embeds; `build_href` links a build's directory from the page."""
    strings = StringTable()
    axes = recorded_axes(job.builds)
    builds = [
        {
            "id": build.id,
            "h": build_href(build),
            "t": column_time(build.started),
            "s": short_time(build.started),
            "e": [environment.value(build, axis) for axis in axes],
            "n": f"{build_href(build)}/{build.meta('node-logs')}" if build.meta("node-logs") else "",
        }
        for build in job.builds
    ]
    rows = [
        [
            info.name,
            strings(",".join(info.tags)),
            strings(info.tier),
            strings(info.category),
            strings(info.engine),
            encode_row(job.row_runs(key), strings),
        ]
        for key, info in job.rows.items()
    ]
    return {
        "codes": CODES,
        "columns": columns,
        "axes": [axis.label for axis in axes],
        "builds": builds,
        "overall": encode_row(((build.overall, 1) for build in job.builds), strings),
        "rows": rows,
        "strings": strings.strings,
    }
