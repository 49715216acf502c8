"""Where the dashboard's figures knowingly differ from TestGrid's, said once: the pages, the JSON and
docs/testgrid-departures.md state each beside the figure it changes."""

from __future__ import annotations

import enum


class Departure(enum.Enum):
    """A figure computed otherwise than TestGrid computes it, because the reader is better served; the value says
    what TestGrid does, then what the dashboard does."""

    SKIPPED_CELLS = (
        "counts a skipped cell as a passed one in its cells figure; here skipped cells are counted apart, "
        "so a tab of mostly skipped tests does not read as mostly passed"
    )
    CROSS_CHECKS_APART = (
        "counts every row's cells in its columns and cells figures; here the engines' cross-check rows (--engine "
        "both: winsuite's self-checks) are counted apart, so those figures are the product's tests' alone"
    )
    RETRIED_EVERY_RUN = (
        "leaves out of its flakiness a test with no run that passed or failed outright (retried in every "
        "build); here it is rated (100 % when every run needed a retry)"
    )
    WINDOW_FROM_NEWEST_BUILD = (
        "counts the flakiness window back from now; here back from the newest build, so an old history "
        "still shows its flakiness"
    )
    OVERALL_ROW_NOT_RATED = (
        "rates the Overall row's flakiness too; here only tests are rated (the Overall row is the build's "
        "own result)"
    )
    INFRASTRUCTURE_BY_CLASS = (
        "counts as infrastructure failures, left out of its flakiness, only failures whose whole message is one "
        "word; here a failure classed infrastructure by its evidence (whatever its message) and an interrupted test "
        "with no class are left out (the run, not the test, went wrong), a timeout, setup or test failure is the "
        "test's own (one-word message or not), and any other failure with no class keeps the one-word rule"
    )

    @property
    def note(self) -> str:
        """The sentence a page shows beside the figure."""
        return f"TestGrid: {self.value}."

    @property
    def mark(self) -> str:
        """The sign a page puts on the figures this departure changes ("" when it shows the note alone)."""
        return _MARKS.get(self, "")

    @property
    def marked_note(self) -> str:
        return f"{self.mark} {self.note}" if self.mark else self.note


_MARKS = {Departure.SKIPPED_CELLS: "*", Departure.RETRIED_EVERY_RUN: "†"}


# What each figure departs in, in the order a page lists its notes.
CELLS_FIGURE = (Departure.SKIPPED_CELLS, Departure.CROSS_CHECKS_APART)
FLAKINESS_FIGURE = (
    Departure.RETRIED_EVERY_RUN,
    Departure.WINDOW_FROM_NEWEST_BUILD,
    Departure.OVERALL_ROW_NOT_RATED,
    Departure.INFRASTRUCTURE_BY_CLASS,
)
