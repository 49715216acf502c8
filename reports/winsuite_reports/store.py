"""Object stores that hold results in prow's layout (gs://, s3://, or a directory): what reading and publishing need
of one, the failures they name, and the URL forms they are given as."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Protocol


class StoreFailure(enum.Enum):
    """Why a store could not be read or written; each has its own exit code (README, "Exit codes")."""

    BUCKET_MISSING = "no such bucket"
    ACCESS_DENIED = "access denied"
    THROTTLED = "throttled (still, after retries with backoff)"
    OBJECT_GONE = "an object listed was gone when read"
    UNREACHABLE = "the store could not be reached"

    @property
    def whole_store(self) -> bool:
        """Whether every further request to the store would fail alike (then a report stops asking it)."""
        return self is not StoreFailure.OBJECT_GONE


class StoreError(Exception):
    """A request to a store failed: which failure, and the store's own words."""

    def __init__(self, failure: StoreFailure, detail: str) -> None:
        super().__init__(f"{failure.value}: {detail}")
        self.failure = failure
        self.detail = detail


@dataclass(frozen=True, slots=True)
class StoredObject:
    key: str  # the full object key
    version: str  # GCS's generation, S3's ETag: changes whenever the object is written
    size: int
    md5: str  # hex MD5 of the content where the store says it ("" where it does not: S3 multipart uploads)


@dataclass(frozen=True, slots=True)
class Level:
    """One level of a listing: the names of the 'directories' and of the objects right under a prefix."""

    dirs: list[str]
    files: list[str]


class ObjectStore(Protocol):
    """One bucket; keys are '/'-separated paths."""

    def list_level(self, prefix: str) -> Level:
        """What is right under `prefix/` (a delimiter listing)."""
        ...

    def list_files(self, prefix: str) -> list[StoredObject]:
        """Every object under `prefix/`, at any depth."""
        ...

    def read(self, key: str) -> bytes: ...

    def write(self, key: str, data: bytes) -> None: ...

    def link(self, key: str) -> str:
        """A web address of the key for the dashboard's links."""
        ...


@dataclass(frozen=True, slots=True)
class RemoteRoot:
    """A results location given as scheme://bucket/prefix (the prefix without slashes at either end)."""

    scheme: str
    bucket: str
    prefix: str

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.bucket}" + (f"/{self.prefix}" if self.prefix else "")

    def key(self, *parts: str) -> str:
        return "/".join(part for part in (self.prefix, *parts) if part)


SCHEMES = ("gs", "s3")
_URL = re.compile(r"^(?P<scheme>[a-z0-9]+)://(?P<bucket>[^/]*)(?:/(?P<prefix>.*))?$")
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$")


def is_remote(location: str) -> bool:
    return _URL.match(location) is not None


def parse_remote(location: str) -> RemoteRoot:
    """gs://BUCKET/PREFIX or s3://BUCKET/PREFIX; ValueError saying what is wrong with anything else."""
    found = _URL.match(location)
    if found is None:
        raise ValueError(f"{location}: not a URL of the form gs://BUCKET/PREFIX or s3://BUCKET/PREFIX")
    scheme, bucket = found["scheme"], found["bucket"]
    if scheme not in SCHEMES:
        raise ValueError(f"{location}: unknown scheme {scheme}:// (known: {', '.join(s + '://' for s in SCHEMES)})")
    if not _BUCKET.match(bucket):
        raise ValueError(f"{location}: {bucket!r} is not a bucket name (3-222 characters: a-z 0-9 . _ -)")
    prefix = (found["prefix"] or "").strip("/")
    if any(part in ("", ".", "..") for part in prefix.split("/")) and prefix:
        raise ValueError(f"{location}: the prefix has an empty, '.' or '..' part")
    return RemoteRoot(scheme, bucket, prefix)
