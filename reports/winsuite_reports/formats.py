"""How the pages write a time and a fraction."""

from __future__ import annotations

import time


def when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch)) if epoch else "—"


def pct(fraction: float | None) -> str:
    return "—" if fraction is None else f"{100 * fraction:.1f} %"
