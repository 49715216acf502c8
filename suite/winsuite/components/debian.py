"""Files of Debian's mirror (a package archive, a source tarball), checked against the SHA-256 winsuite pins."""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.request

from winsuite.errors import UsageError

MIRROR_ENV = "WINSUITE_DEBIAN_MIRROR"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
TIMEOUT_SECONDS = 120


def mirror() -> str:
    return os.environ.get(MIRROR_ENV) or DEFAULT_MIRROR


def fetch(path: str, sha256: str) -> bytes:
    """The file at `path` under the mirror, refused unless its SHA-256 is `sha256`."""
    url = f"{mirror()}/{path}"
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            data = bytes(response.read())
    except (urllib.error.URLError, OSError) as err:
        raise UsageError(f"cannot fetch {url} from Debian's mirror ({MIRROR_ENV} names another): {err}") from err
    if hashlib.sha256(data).hexdigest() != sha256:
        raise UsageError(f"{url} is not the file winsuite pins (its SHA-256 is not {sha256})")
    return data
