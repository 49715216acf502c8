"""The grid's compact encoding decodes back to the cells, and its links reach the build directories."""

from __future__ import annotations

from pathlib import Path

from jinja2.utils import htmlsafe_json_dumps

from winsuite_reports.grid import CODES
from winsuite_reports.grid import RUN_WIDTH
from winsuite_reports.grid import GridRows
from winsuite_reports.grid import StringTable
from winsuite_reports.grid import encode_row
from winsuite_reports.grid import grid_data
from winsuite_reports.grid import grid_json
from winsuite_reports.model import Build
from winsuite_reports.model import Cell
from winsuite_reports.model import Status
from winsuite_reports.results import load_history
from winsuite_reports.synthetic import START
from winsuite_reports.synthetic import write_job


def decode(runs: list[int], strings: list[str]) -> list[tuple[str, int, str, str, str]]:
    """What the page's script does with a row: status code, run length and its message, diagnostics and icon."""
    return [(CODES[runs[i]], runs[i + 1], *(strings[index] for index in runs[i + 2 : i + 5]))  # type: ignore[misc]
            for i in range(0, len(runs), RUN_WIDTH)]


def decode_failures(runs: list[int], strings: list[str]) -> list[tuple[str, str, str]]:
    """Each run's icon, failure class and evidence."""
    return [(strings[runs[i + 4]], strings[runs[i + 5]], strings[runs[i + 6]]) for i in range(0, len(runs), RUN_WIDTH)]


def test_equal_neighbouring_cells_collapse_into_one_run() -> None:
    strings = StringTable()
    failed = Cell(Status.FAIL, "boom", "F", "artifacts/my test/")
    runs = encode_row([(Cell(Status.PASS), 2), (Cell(Status.PASS), 1), (failed, 1), (failed, 1),
                       (Cell(Status.NO_RESULT), 1)], strings)
    assert decode(runs, strings.strings) == [
        ("P", 3, "", "", ""),
        ("F", 2, "boom", "artifacts/my%20test/", "F"),
        ("_", 1, "", "", ""),
    ]


def test_the_string_table_stores_each_text_once() -> None:
    strings = StringTable()
    assert strings("a") == strings("a") == 1
    assert strings("") == 0
    assert strings.strings == ["", "a"]


def test_grid_data_lists_builds_newest_first_with_their_metadata(tmp_path: Path) -> None:
    meta = {"kubernetes-version": "v1.36.3", "windows-builds": "10.0.20348"}
    ids = write_job(
        tmp_path, "job", {"b": "KP", "a": "SF"}, metadata=meta,
        properties={"a": {"tags": "Serial", "engine": "upstream"}},
    )
    (job,) = load_history(tmp_path, now=START).jobs

    def href(build: Build) -> str:
        return f"../{build.id}"

    data = grid_data(job, href, 50)
    builds = data["builds"]
    assert isinstance(builds, list)
    assert data["axes"] == ["Kubernetes", "Windows builds"]  # the axes these builds record, Kubernetes always
    assert [(b["id"], b["h"], b["e"]) for b in builds] == [
        (ids[0], f"../{ids[0]}", ["v1.36.3", "10.0.20348"]),
        (ids[1], f"../{ids[1]}", ["v1.36.3", "10.0.20348"]),
    ]
    rows = data["rows"]
    strings = data["strings"]
    assert isinstance(rows, GridRows)
    assert isinstance(strings, list)
    assert [row[0] for row in rows] == ["a", "b"]
    assert strings[rows[0][1]] == "Serial"
    assert strings[rows[0][4]] == "upstream" and strings[rows[1][4]] == ""
    assert [run[0] for run in decode(rows[0][5], strings)] == ["S", "F"]
    assert decode(rows[1][5], strings)[0][4] == "1/2"
    assert all(len(b["s"]) == len("11-24 10:31") for b in builds)
    assert all(b["n"] == "" for b in builds)  # no node logs collected


def test_the_grid_json_is_what_tojson_writes(tmp_path: Path) -> None:
    odd = "[sig-node] <b>it</b> & 'quotes' \"double\" — ünïcode"
    write_job(tmp_path, "job", {odd: "PFP", "[sig-apps] plain": "PPP", "[sig-apps] flaky": "KPS"})
    (job,) = load_history(tmp_path, now=START).jobs
    data = grid_data(job, lambda build: build.id, 50)
    rows = data["rows"]
    assert isinstance(rows, GridRows)
    assert str(grid_json(data)) == htmlsafe_json_dumps({**data, "rows": list(rows)}, sort_keys=True)
