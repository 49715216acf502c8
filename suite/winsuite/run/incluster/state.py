"""What a run inside the cluster keeps in its build directory besides its run document, so `winsuite attach BUILD`
can take it over: the image, the shards as planned, and when it started."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.inputs import document_codec
from winsuite.results.junit import write_atomically
from winsuite_reports.prow import MalformedJson
from winsuite_reports.prow import read_json_object

STATE_FILE = "in-cluster.json"


@dataclasses.dataclass(frozen=True)
class InClusterState:
    image: str
    shards: tuple[tuple[str, ...], ...]  # the tests of each shard, by full name
    serial: tuple[str, ...]  # the tests of the serial phase (their rows go to junit_02.xml)
    upstream: tuple[str, ...]  # the tests the upstream engine runs (the rest are native)
    started: float
    expected: tuple[float, ...]  # seconds each shard was expected to take (the planner's)

    def save(self, build_dir: Path) -> None:
        data = document_codec.encode(self)
        write_atomically(build_dir / STATE_FILE, (json.dumps(data, indent=1) + "\n").encode())

    @staticmethod
    def load(build_dir: Path) -> InClusterState:
        path = build_dir / STATE_FILE
        try:
            raw = read_json_object(path)
        except FileNotFoundError:
            raise UsageError(f"{build_dir}: not a build of `winsuite run --in-cluster` (no {STATE_FILE})") from None
        except OSError as err:
            raise UsageError(f"cannot read {path}: {err.strerror or err}") from None
        except MalformedJson as err:
            raise DataError(path, "", str(err)) from None
        try:
            state: InClusterState = document_codec.decode(InClusterState, raw)
        except document_codec.DocumentError as err:
            raise DataError(path, err.field, f"not the state of an in-cluster run: {err.problem}") from None
        if not state.shards:
            raise DataError(path, "shards", "expected a list of lists of test names")
        return state
