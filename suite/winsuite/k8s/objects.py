"""What every API object has, read the same way for any kind: its name and labels."""

from __future__ import annotations

from typing import Any


def name_of(obj: Any) -> str:
    return str(obj.metadata.name)


def labels_of(obj: Any) -> dict[str, str]:
    return dict(obj.metadata.labels or {})
