"""A GCS bucket through google-cloud-storage, credentials from Application Default Credentials.

ADC as every Google client finds them (GOOGLE_APPLICATION_CREDENTIALS, gcloud's application-default login, the
metadata server of a GCE/GKE machine; NO_GCE_CHECK=true skips the last); without any, requests go anonymous (public
buckets such as kubernetes-ci-logs). STORAGE_EMULATOR_HOST points the client at another server of GCS's JSON API.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

import google.auth
import requests
from google.api_core import exceptions
from google.api_core import retry
from google.auth.credentials import AnonymousCredentials
from google.auth.exceptions import DefaultCredentialsError
from google.auth.exceptions import TransportError
from google.cloud import storage
from google.cloud.storage.retry import DEFAULT_RETRY

from winsuite_reports.store import Level
from winsuite_reports.store import StoredObject
from winsuite_reports.store import StoreError
from winsuite_reports.store import StoreFailure

PUBLIC_ENDPOINT = "https://storage.googleapis.com"
# Throttling (429) and a server's passing 5xx are retried with exponential backoff for up to this long; a
# connection that cannot be made is not retried: a store that is gone is said at once.
RETRY_SECONDS = 15.0
_RETRY = DEFAULT_RETRY.with_predicate(retry.if_exception_type(
    exceptions.TooManyRequests, exceptions.InternalServerError, exceptions.BadGateway,
    exceptions.ServiceUnavailable, exceptions.GatewayTimeout)).with_timeout(RETRY_SECONDS)
TIMEOUT = (10, 60)  # connect, read


def emulator() -> str:
    """STORAGE_EMULATOR_HOST as a URL (Go's clients take host:port, the Python one needs the scheme); "" unset."""
    host = os.environ.get("STORAGE_EMULATOR_HOST", "").strip().rstrip("/")
    return host if not host or "://" in host else f"http://{host}"


def client() -> storage.Client:
    """A client with ADC, or anonymous where ADC finds no credentials (and always with an emulator)."""
    if emulator():
        anonymous = AnonymousCredentials()  # type: ignore[no-untyped-call]  # google-auth leaves it untyped
        return storage.Client(project="winsuite", credentials=anonymous, client_options={"api_endpoint": emulator()})
    try:
        credentials, project = google.auth.default()
    except DefaultCredentialsError:
        return storage.Client.create_anonymous_client()
    return storage.Client(project=project or "winsuite", credentials=credentials)


class GcsStore:
    def __init__(self, bucket: str) -> None:
        self.bucket = bucket
        self._client = client()
        self._bucket = self._client.bucket(bucket)

    def list_level(self, prefix: str) -> Level:
        start = f"{prefix}/" if prefix else ""
        with _failures("list", self.bucket, start):
            blobs = self._client.list_blobs(self.bucket, prefix=start, delimiter="/", retry=_RETRY, timeout=TIMEOUT)
            files = [blob.name[len(start):] for blob in blobs]  # the listing's prefixes are gathered meanwhile
            return Level(sorted(name[len(start):].rstrip("/") for name in blobs.prefixes), files)

    def list_files(self, prefix: str) -> list[StoredObject]:
        start = f"{prefix}/" if prefix else ""
        with _failures("list", self.bucket, start):
            return [StoredObject(blob.name, str(blob.generation or ""), blob.size or 0, _hex(blob.md5_hash))
                    for blob in self._client.list_blobs(self.bucket, prefix=start, retry=_RETRY, timeout=TIMEOUT)]

    def read(self, key: str) -> bytes:
        with _failures("read", self.bucket, key):
            data: bytes = self._bucket.blob(key).download_as_bytes(retry=_RETRY, timeout=TIMEOUT)
            return data

    def write(self, key: str, data: bytes) -> None:
        with _failures("write", self.bucket, key):
            self._bucket.blob(key).upload_from_string(data, retry=_RETRY, timeout=TIMEOUT)

    def link(self, key: str) -> str:
        return f"{emulator() or PUBLIC_ENDPOINT}/{quote(self.bucket)}/{quote(key)}"


def _hex(md5: str | None) -> str:
    return base64.b64decode(md5).hex() if md5 else ""


@contextmanager
def _failures(verb: str, bucket: str, key: str) -> Iterator[None]:
    """Any failure of the client or of the connection as a StoreError naming the request."""
    what = f"{verb} gs://{bucket}/{key}"
    try:
        yield
    except exceptions.NotFound as err:
        missing_bucket = verb == "list" or "bucket" in str(err.message).lower()
        failure = StoreFailure.BUCKET_MISSING if missing_bucket else StoreFailure.OBJECT_GONE
        raise StoreError(failure, f"{what}: {err.message}") from err
    except (exceptions.Forbidden, exceptions.Unauthorized) as err:
        raise StoreError(StoreFailure.ACCESS_DENIED, f"{what}: {err.message}") from err
    except (exceptions.TooManyRequests, exceptions.ServiceUnavailable, exceptions.RetryError) as err:
        raise StoreError(StoreFailure.THROTTLED, f"{what}: {err}") from err
    except (requests.exceptions.RequestException, TransportError, exceptions.GoogleAPIError, OSError) as err:
        raise StoreError(StoreFailure.UNREACHABLE, f"{what}: {type(err).__name__}") from err
