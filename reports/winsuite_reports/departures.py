"""Where the dashboard's figures knowingly differ from TestGrid's, said once: the pages, the JSON and the README
state each beside the figure it changes."""

from __future__ import annotations

import enum


class Departure(enum.Enum):
    """A figure computed otherwise than TestGrid computes it, because the reader is better served; the value says
    what TestGrid does, then what the dashboard does."""

    SKIPPED_CELLS = (
        "counts a skipped cell as a passed one in its cells figure; here skipped cells are counted apart, "
        "so a tab of mostly skipped tests does not read as mostly passed"
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
    INTERRUPTED_IS_INFRA = (
        "counts a test cut off by an interrupt as a failure of the test; here it is an infrastructure "
        "failure (the run, not the test, went wrong)"
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
CELLS_FIGURE = (Departure.SKIPPED_CELLS,)
FLAKINESS_FIGURE = (
    Departure.RETRIED_EVERY_RUN,
    Departure.WINDOW_FROM_NEWEST_BUILD,
    Departure.OVERALL_ROW_NOT_RATED,
    Departure.INTERRUPTED_IS_INFRA,
)
