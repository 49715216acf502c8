"""The progress of a run inside the cluster: done/total across shards, and per shard."""

from __future__ import annotations

from winsuite.results.model import Attempt
from winsuite.run.progress import Progress


class ShardProgress(Progress):
    def __init__(self, total: int, per_shard: dict[int, int]) -> None:
        super().__init__(total)
        self.per_shard = per_shard
        self.done_per_shard = dict.fromkeys(per_shard, 0)

    def record_shard(self, shard: int, attempt: Attempt, final: bool, earlier_failed: bool) -> None:
        if final:
            self.done_per_shard[shard] = self.done_per_shard.get(shard, 0) + 1
        self.record(attempt, final, earlier_failed)

    def line(self, text: str) -> None:
        self._print_line(text)

    def status(self) -> str:
        shards = ", ".join(f"shard {n}: {self.done_per_shard[n]}/{total}" for n, total in self.per_shard.items())
        return f"{super().status()} | {shards}"
