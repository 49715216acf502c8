"""The unit tests' settings: hypothesis without its per-example deadline."""

from __future__ import annotations

from hypothesis import settings

# Property tests check what the code does, not how fast: time is measured in bench/, and on a loaded machine
# hypothesis' deadline would make them flaky timed tests.
settings.register_profile("winsuite-unit", deadline=None)
settings.load_profile("winsuite-unit")
