"""Pass-rate trend charts drawn as inline SVG: numbers and escaped titles only, no script."""

from __future__ import annotations

import math
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup
from markupsafe import escape

from winsuite_reports.cross_checks import product_counts
from winsuite_reports.job import Job
from winsuite_reports.model import Status

AXIS_WIDTH, MARGIN = 34, 5  # room for the axis labels and the dots at the edges
DOTS_FULL_SIZE = 100  # more builds than this get smaller dots


@dataclass(frozen=True)
class Point:
    build: str
    rate: float | None  # share of the build's tests that passed; None when none ran
    overall: Status


def pass_rate(counts: Mapping[Status, int]) -> float | None:
    """Passed / (passed + failed + flaky) over a build's tests (its cell counts); skips do not count either way."""
    passed = counts.get(Status.PASS, 0)
    failed = counts.get(Status.FAIL, 0) + counts.get(Status.FLAKY, 0)
    return passed / (passed + failed) if passed + failed else None


def trend_points(job: Job) -> list[Point]:
    """Oldest first, as a chart reads left to right; the engines' cross-checks are no test of the product."""
    per_build = zip(job.builds, product_counts(job), strict=True)
    return [Point(build.id, pass_rate(counts), build.overall.status) for build, counts in reversed(list(per_build))]


def trend_chart(
    points: Sequence[Point], *, width: int = 720, height: int = 150, compact: bool = False
) -> Markup:
    """Per-build pass rates as a line; unless `compact`, with axes and a dot per build coloured by Overall."""
    left = 0 if compact else AXIS_WIDTH
    plot_w, plot_h = width - left - MARGIN, height - 2 * MARGIN
    step = plot_w / max(len(points) - 1, 1)
    # The axis starts at the lowest rate rounded down to 10 %, and never above 90 %: a job that hovers
    # around 98 % shows its dips instead of a flat line at the top.
    low = min(0.9, math.floor(10 * min((p.rate for p in points if p.rate is not None), default=0.0)) / 10)
    radius = 3 if len(points) <= DOTS_FULL_SIZE else 1.5

    def y(rate: float) -> float:
        return MARGIN + plot_h * (1 - (max(rate, low) - low) / (1 - low))

    parts = [
        f'<svg class="trend" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">'
    ]
    for rate in () if compact else (low, (low + 1) / 2, 1.0):
        parts.append(
            f'<line class="axis" x1="{left}" x2="{width - MARGIN}" y1="{y(rate):.1f}" y2="{y(rate):.1f}"/>'
            f'<text x="{left - 4}" y="{y(rate) + 4:.1f}" text-anchor="end">{rate:.0%}</text>'
        )
    coords = [(left + i * step, y(point.rate or low)) for i, point in enumerate(points)]
    line = " ".join(
        f"{x:.1f},{yy:.1f}" for (x, yy), point in zip(coords, points, strict=True) if point.rate is not None
    )
    parts.append(f'<polyline class="rate" points="{line}"/>')
    for (x, yy), point in [] if compact else zip(coords, points, strict=True):
        share = "no test ran" if point.rate is None else f"{100 * point.rate:.1f} % of tests passed"
        title = escape(f"{point.build}: {share} (Overall {point.overall.name})")
        parts.append(f'<circle class="s{point.overall.value}" cx="{x:.1f}" cy="{yy:.1f}" r="{radius}">')
        parts.append(f"<title>{title}</title></circle>")
    parts.append("</svg>")
    return Markup("".join(parts))
