"""Plain-text tables and JSON for the CLI, so every command prints the same way."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    # The last column is left unpadded: it usually holds long test names.
    line = "  ".join(h.ljust(w) for h, w in zip(headers[:-1], widths[:-1], strict=True)) + "  " + headers[-1]
    print(line.rstrip())
    for row in rows:
        cells = [c.ljust(w) for c, w in zip(row[:-1], widths[:-1], strict=True)] + [row[-1]]
        print("  ".join(cells).rstrip())


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, indent=2)
    sys.stdout.write("\n")


def warn(message: str) -> None:
    print(f"winsuite: warning: {message}", file=sys.stderr)
