"""Each departure from TestGrid is stated in docs/testgrid-departures.md as the pages state it."""

from __future__ import annotations

from pathlib import Path

import pytest

from winsuite_reports.departures import CELLS_FIGURE
from winsuite_reports.departures import FLAKINESS_FIGURE
from winsuite_reports.departures import Departure

DEPARTURES_PAGE = Path(__file__).resolve().parents[2] / "docs" / "testgrid-departures.md"


@pytest.mark.parametrize("departure", list(Departure))
def test_the_docs_state_the_departure(departure: Departure) -> None:
    assert f"| {departure.note} |" in DEPARTURES_PAGE.read_text(encoding="utf-8")


def test_every_departure_is_stated_beside_a_figure() -> None:
    assert sorted(d.name for d in (*CELLS_FIGURE, *FLAKINESS_FIGURE)) == sorted(d.name for d in Departure)
