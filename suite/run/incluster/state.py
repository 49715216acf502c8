"""What a run inside the cluster keeps in its build directory, so `winsuite attach BUILD` can take it over."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.inputs.cluster_spec import ClusterSpec
from winsuite.inputs.cluster_spec import ClusterType
from winsuite.results.junit import write_atomically
from winsuite_reports.prow import MalformedJson
from winsuite_reports.prow import read_json_object

STATE_FILE = "in-cluster.json"


@dataclasses.dataclass(frozen=True)
class InClusterState:
    run_id: str
    job: str
    image: str
    cluster: ClusterSpec
    shards: list[list[str]]  # the tests of each shard, by full name
    serial: list[str]  # the tests of the serial phase (their rows go to junit_02.xml)
    upstream: list[str]  # the tests the upstream engine runs (the rest are native)
    started: float
    run_timeout: float
    job_dir: str | None  # <results root>/<job>, where latest-build.txt and the dashboard go
    expected: list[float]  # seconds each shard was expected to take (the planner's)
    node_logs: str = "on-failure"  # --collect-node-logs: collected here, once the shards are done

    def save(self, build_dir: Path) -> None:
        data = dataclasses.asdict(self)
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
            fields: dict[str, Any] = dict(raw)
            cluster = dict(fields["cluster"])
            fields["cluster"] = ClusterSpec(**{**cluster, "type": ClusterType(str(cluster.get("type")))})
            state = InClusterState(**fields)
        except (TypeError, KeyError, ValueError) as err:
            raise DataError(path, "", f"not the state of an in-cluster run: {err}") from None
        if not all(isinstance(s, list) for s in state.shards) or not state.shards:
            raise DataError(path, "shards", "expected a list of lists of test names")
        return state
