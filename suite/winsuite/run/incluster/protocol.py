"""What a shard pod tells the run that started it, through its log: rows as they finish, then its whole build.

A line starting with PREFIX carries one JSON message; every other line is the shard's own output (its build log).
The kinds are closed: an unknown kind is a ProtocolError (a shard image of another winsuite version), a torn line
(a pod killed mid-write) is ignored. The build travels as base64 chunks of a gzipped tar, then an END message with
its size and digest, so a build cut short is never taken for a whole one.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import hashlib
import io
import json
import tarfile
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from typing import TextIO

from winsuite.results.events import ProtocolError
from winsuite.results.model import Attempt

PREFIX = "@winsuite "
CHUNK_BYTES = 48 * 1024  # of the tar, per line (64 KiB of base64)


class Kind(enum.Enum):
    ROW = "row"  # phase, final, attempt: a row the shard recorded
    BUILD = "build"  # data: the next base64 chunk of the build's tar.gz
    END = "end"  # code, bytes, sha256: the shard is done, its build was sent whole


@dataclasses.dataclass(frozen=True)
class Message:
    kind: Kind
    fields: dict[str, Any]

    def line(self) -> str:
        return PREFIX + json.dumps({"kind": self.kind.value, **self.fields}, separators=(",", ":"))

    @property
    def attempt(self) -> Attempt:
        return Attempt.from_dict(self.fields["attempt"])


def parse(line: str) -> Message | None:
    """The message of a log line; None for the shard's own output and for a torn line."""
    if not line.startswith(PREFIX):
        return None
    try:
        raw = json.loads(line[len(PREFIX):])
    except json.JSONDecodeError:
        return None
    if not isinstance(raw, dict):
        return None
    try:
        kind = Kind(raw.pop("kind", None))
    except ValueError:
        raise ProtocolError(f"unknown shard message {line[:80]!r}; known: {', '.join(k.value for k in Kind)}") from None
    return Message(kind, raw)


def row(phase: int, attempt: Attempt, final: bool) -> Message:
    return Message(Kind.ROW, {"phase": phase, "final": final, "attempt": json.loads(attempt.to_json())})


def build_messages(build_dir: Path, code: int) -> Iterator[Message]:
    """The build directory as a tar.gz in chunks, then END."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(build_dir, arcname=".")
    data = buffer.getvalue()
    for start in range(0, len(data), CHUNK_BYTES):
        yield Message(Kind.BUILD, {"data": base64.b64encode(data[start:start + CHUNK_BYTES]).decode()})
    yield Message(Kind.END, {"code": code, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})


class BuildReceiver:
    """Collects a shard's build chunks; `complete` once END confirmed every byte."""

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self.code: int | None = None
        self.problem = ""

    def add(self, message: Message) -> None:
        if message.kind is Kind.BUILD:
            self._chunks.append(base64.b64decode(message.fields["data"]))
        elif message.kind is Kind.END:
            data = b"".join(self._chunks)
            if len(data) != message.fields.get("bytes") or hashlib.sha256(data).hexdigest() != message.fields.get(
                    "sha256"):
                self.problem = f"its build arrived cut short ({len(data)} of {message.fields.get('bytes')} bytes)"
            self.code = int(message.fields.get("code", 1))

    @property
    def complete(self) -> bool:
        return self.code is not None and not self.problem

    @property
    def archive(self) -> bytes:
        """The build's tar.gz as sent (whole once `complete`)."""
        return b"".join(self._chunks)


def emitter(stream: TextIO) -> Callable[[Message], None]:
    """Writes each message as one line, at once: the run follows the shard as it goes."""

    def emit(message: Message) -> None:
        stream.write(message.line() + "\n")
        stream.flush()

    return emit
