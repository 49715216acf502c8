"""Each departure from TestGrid is stated in the README as the pages state it."""

from __future__ import annotations

from pathlib import Path

import pytest

from winsuite_reports.departures import CELLS_FIGURE
from winsuite_reports.departures import FLAKINESS_FIGURE
from winsuite_reports.departures import Departure

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.parametrize("departure", list(Departure))
def test_the_readme_states_the_departure(departure: Departure) -> None:
    assert f"| {departure.note} |" in README.read_text(encoding="utf-8")


def test_every_departure_is_stated_beside_a_figure() -> None:
    assert sorted(d.name for d in (*CELLS_FIGURE, *FLAKINESS_FIGURE)) == sorted(d.name for d in Departure)
