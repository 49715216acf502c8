"""The store of a remote root: each scheme's client, imported only when that scheme is asked for (they are optional
extras: `winsuite[s3]`, `winsuite[gcs]`)."""

from __future__ import annotations

from collections.abc import Callable

from winsuite_reports.store import ObjectStore
from winsuite_reports.store import RemoteRoot


class MissingClient(Exception):
    """The optional client library of a scheme is not installed; the text says which extra installs it."""


def open_store(root: RemoteRoot) -> ObjectStore:
    """The store of a remote root, through its scheme's client (credentials from the ecosystem's standard chain,
    anonymous where it yields none); MissingClient when that client is not installed."""
    opener: Callable[[str], ObjectStore]
    if root.scheme == "s3":
        try:
            from winsuite_reports.store_s3 import S3Store
        except ImportError as err:
            raise MissingClient(f"reading s3:// needs the minio client: pip install 'winsuite[s3]' ({err})") from None
        opener = S3Store
    else:
        try:
            from winsuite_reports.store_gcs import GcsStore
        except ImportError as err:
            raise MissingClient(
                f"reading gs:// needs google-cloud-storage: pip install 'winsuite[gcs]' ({err})") from None
        opener = GcsStore
    return opener(root.bucket)
