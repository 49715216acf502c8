"""The engines that run tests, and a job's choice among them (closed sets shared by the job schema and results)."""

from __future__ import annotations

import enum


class Engine(enum.StrEnum):
    """What runs a test: a winsuite test (pytest), or a spec of upstream e2e.test (ginkgo)."""

    NATIVE = "native"
    UPSTREAM = "upstream"


class EngineChoice(enum.StrEnum):
    """A job's `engine`: auto = winsuite's port where one exists, else upstream e2e.test; native or upstream = that
    engine only; both = as auto, and the ported specs upstream too, with a row that cross-checks the two verdicts."""

    AUTO = "auto"
    NATIVE = "native"
    UPSTREAM = "upstream"
    BOTH = "both"
