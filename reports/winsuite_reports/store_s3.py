"""An S3 bucket through the minio client (any S3 API: AWS, MinIO, Ceph, R2 …), credentials from the AWS chain.

The endpoint is the AWS SDKs' standard setting, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (default: AWS's), the
region AWS_REGION or AWS_DEFAULT_REGION. Credentials come as the AWS chain finds them: the environment
(AWS_ACCESS_KEY_ID …), the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, AWS_PROFILE), then the instance or
container role (skipped with AWS_EC2_METADATA_DISABLED=true); without any, requests go unsigned (public buckets).
"""

from __future__ import annotations

import configparser
import io
import os
from urllib.parse import quote
from urllib.parse import urlsplit

import urllib3
from minio import Minio
from minio.credentials.providers import AWSConfigProvider
from minio.credentials.providers import EnvAWSProvider
from minio.credentials.providers import IamAwsProvider
from minio.credentials.providers import Provider
from minio.error import MinioException
from minio.error import S3Error
from minio.error import ServerError

from winsuite_reports.store import Level
from winsuite_reports.store import StoredObject
from winsuite_reports.store import StoreError
from winsuite_reports.store import StoreFailure

AWS_ENDPOINT = "https://s3.amazonaws.com"
CONNECTIONS = 16  # at least the report's fetch workers
# Throttling (503 SlowDown, 429) and a server's passing 5xx are retried with exponential backoff (0.5 s, 1 s, 2 s,
# 4 s); a connection that cannot be made is retried twice only: a store that is gone is said at once.
RETRY = urllib3.Retry(total=4, connect=2, read=2, backoff_factor=0.5, status_forcelist=(429, 500, 502, 503, 504),
                      respect_retry_after_header=True, allowed_methods=None)
TIMEOUT = urllib3.Timeout(connect=10, read=60)
_DENIED = {"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled", "ExpiredToken",
           "InvalidToken", "AccountProblem"}
_THROTTLED = {"SlowDown", "TooManyRequests", "RequestLimitExceeded", "Throttling"}


def endpoint() -> str:
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or AWS_ENDPOINT


def aws_credentials() -> Provider | None:
    """The first source of the AWS chain that has credentials; None (unsigned requests) when none has."""
    chain: list[Provider] = [EnvAWSProvider(), AWSConfigProvider()]
    if os.environ.get("AWS_EC2_METADATA_DISABLED", "").lower() != "true":
        chain.append(IamAwsProvider())
    for provider in chain:
        try:
            found = provider.retrieve()
        except (ValueError, OSError, KeyError, configparser.Error, MinioException, urllib3.exceptions.HTTPError):
            continue
        if found is not None and found.access_key and found.secret_key:
            return provider
    return None


class S3Store:
    def __init__(self, bucket: str) -> None:
        self.bucket = bucket
        self._endpoint = endpoint()
        parts = urlsplit(self._endpoint)
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or None
        http = urllib3.PoolManager(maxsize=CONNECTIONS, retries=RETRY, timeout=TIMEOUT)
        self._client = Minio(parts.netloc, secure=parts.scheme == "https", region=region,
                             credentials=aws_credentials(), http_client=http)

    def list_level(self, prefix: str) -> Level:
        start = f"{prefix}/" if prefix else ""
        level = Level([], [])
        with _failures("list", self.bucket, start):
            for item in self._client.list_objects(self.bucket, prefix=start, recursive=False):
                name = (item.object_name or "")[len(start):]
                if name:
                    (level.dirs if item.is_dir else level.files).append(name.rstrip("/"))
        return level

    def list_files(self, prefix: str) -> list[StoredObject]:
        start = f"{prefix}/" if prefix else ""
        with _failures("list", self.bucket, start):
            return [StoredObject(item.object_name, item.etag or "", item.size or 0, _md5_of(item.etag or ""))
                    for item in self._client.list_objects(self.bucket, prefix=start, recursive=True)
                    if item.object_name and not item.is_dir]

    def read(self, key: str) -> bytes:
        with _failures("read", self.bucket, key):
            response = self._client.get_object(self.bucket, key)
            try:
                return response.read()
            finally:
                response.close()
                response.release_conn()

    def write(self, key: str, data: bytes) -> None:
        with _failures("write", self.bucket, key):
            self._client.put_object(self.bucket, key, io.BytesIO(data), len(data))

    def link(self, key: str) -> str:
        return f"{self._endpoint.rstrip('/')}/{quote(self.bucket)}/{quote(key)}"


def _md5_of(etag: str) -> str:
    """A single-part upload's ETag is the content's MD5; a multipart one's has a '-N' suffix and is not."""
    tag = etag.strip('"')
    return tag if len(tag) == 32 and "-" not in tag else ""


class _failures:
    """Any failure of the minio client or of the connection as a StoreError naming the request."""

    def __init__(self, verb: str, bucket: str, key: str) -> None:
        self.what = f"{verb} s3://{bucket}/{key}"

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, _: object) -> None:
        if error is None or isinstance(error, StoreError) or not isinstance(error, Exception):
            return
        raise StoreError(*_classified(error, self.what)) from error


def _classified(error: Exception, what: str) -> tuple[StoreFailure, str]:
    if isinstance(error, S3Error):
        code = error.code or ""
        if code == "NoSuchBucket":
            return StoreFailure.BUCKET_MISSING, f"{what}: {code}"
        if code in ("NoSuchKey", "NoSuchVersion"):
            return StoreFailure.OBJECT_GONE, f"{what}: {code}"
        if code in _DENIED:
            return StoreFailure.ACCESS_DENIED, f"{what}: {code} ({_credential_source()})"
        if code in _THROTTLED:
            return StoreFailure.THROTTLED, f"{what}: {code}"
        return StoreFailure.UNREACHABLE, f"{what}: {code or error}"
    if isinstance(error, urllib3.exceptions.MaxRetryError):
        reason = error.reason
        if isinstance(reason, urllib3.exceptions.ResponseError):  # the retries ran out on 429/5xx answers
            return StoreFailure.THROTTLED, f"{what}: {reason}"
        return StoreFailure.UNREACHABLE, f"{what}: {type(reason).__name__ if reason else 'no answer'} ({endpoint()})"
    if isinstance(error, ServerError):
        status = error.status_code
        failure = StoreFailure.THROTTLED if status in (429, 503) else StoreFailure.UNREACHABLE
        return failure, f"{what}: HTTP {status}"
    if isinstance(error, urllib3.exceptions.HTTPError | OSError):
        return StoreFailure.UNREACHABLE, f"{what}: {type(error).__name__} ({endpoint()})"
    raise error


def _credential_source() -> str:
    provider = aws_credentials()
    return "unsigned: no AWS credentials found" if provider is None else f"credentials from {type(provider).__name__}"
