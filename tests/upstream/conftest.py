"""A GCS-protocol server for the session, built once into the cache; skipped, saying why, when Go is missing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.tools import gcs_server
from tests.tools.go_programs import GoMissing


@pytest.fixture(scope="session")
def gcs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gcs_server.GcsServer]:
    try:
        binary = gcs_server.build()
    except GoMissing as err:
        pytest.skip(str(err))
    with gcs_server.start(tmp_path_factory.mktemp("gcs"), binary) as server:
        yield server
