"""Python's cycle collector held off while a report reads, analyses or writes a history."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collection_paused() -> Iterator[None]:
    """The collector runs every few hundred new objects and now and then walks every live one: a large history is
    millions of objects that live until the report is written (few of them cycles), and those walks cost as much as
    the report itself. Cycles made meanwhile are collected by its next full pass; nested use keeps it off."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            # What was made meanwhile goes to the oldest generation untraversed (freeze, then unfreeze): enabled
            # with all of it young, the collector's next pass would walk it all at once.
            gc.freeze()
            gc.unfreeze()
            gc.enable()
