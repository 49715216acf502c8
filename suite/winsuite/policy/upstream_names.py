"""Reading upstream test-name lists: `e2e.test --list-tests` output or one full name per line."""

from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path

from winsuite.errors import UsageError
from winsuite.inputs import strict_yaml
from winsuite.paths import upstream_names_file
from winsuite.versions import minor_of
from winsuite.versions import parse_tolerant

# "    k8s.io/kubernetes@v1.36.3/test/e2e/apps/job.go:123: [sig-apps] Job should …"
_LIST_TESTS_LINE = re.compile(r"^\s*\S+\.go:\d+: (.+)$")
_HEADER = "The following spec names can be used"


def parse_list_tests(text: str) -> list[str]:
    """Full names in input order; the `file:line: ` prefix is dropped, the header line ignored."""
    names = []
    for line in text.splitlines():
        if not line.strip() or line.startswith(_HEADER):
            continue
        m = _LIST_TESTS_LINE.match(line)
        names.append(m.group(1) if m else line.strip())
    return names


def read_names_file(path: str | Path) -> list[str]:
    """A names file, plain or gzip-compressed (.gz)."""
    if not str(path).endswith(".gz"):
        return parse_list_tests(strict_yaml.read_text(Path(path), "names file"))
    if not Path(path).is_file():  # a FIFO would block the reader forever
        raise UsageError(f"cannot read names file {path}: not a regular file")
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            return parse_list_tests(handle.read(strict_yaml.MAX_BYTES * 8))
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as err:
        raise UsageError(f"cannot read names file {path}: {getattr(err, 'strerror', None) or err}") from None


def names_for_minor(kubernetes_version: str) -> list[str] | None:
    """The kept list of the newest patch release of the same minor (names change only between minors)."""
    minor = minor_of(kubernetes_version)
    if minor is None:
        return None
    kept = sorted((p for p in upstream_names_file(kubernetes_version).parent.glob("v*.txt.gz")
                   if minor_of(_version_of(p)) == minor), key=lambda p: parse_tolerant(_version_of(p)))
    return read_names_file(kept[-1]) if kept else None


def _version_of(names_file: Path) -> str:
    return names_file.name.removesuffix(".txt.gz")
