"""What the Failures pages' template is given: their clusters, and each cluster's tests with the builds they failed in
made as markup here (a page links thousands of builds: a template loop over them costs several times as much)."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence

from markupsafe import Markup
from markupsafe import escape

from winsuite_reports.clusters import Cluster

SHOWN_BUILDS = 10  # builds listed per test and job of a cluster before "and N more"
BuildLink = Callable[[str, str], str]  # (job, build id) -> the build directory's href from the page (memoised)
BuildAnchor = Callable[[str, str], str]  # (job, build id) -> the markup that links the build


def page_context(clusters: Sequence[Cluster], link: BuildLink, *, across_jobs: bool) -> dict[str, object]:
    """The template's context: `clusters`, `link` and `tests_of(cluster)`."""
    anchors: dict[tuple[str, str], str] = {}  # a build is linked from many clusters' tests

    def anchor(job: str, build: str) -> str:
        found = anchors.get((job, build))
        if found is None:
            found = anchors[job, build] = f'<a href="{escape(link(job, build))}/">{escape(build)}</a>'
        return found

    def tests_of(cluster: Cluster) -> Markup:
        return tests_markup(cluster, anchor, across_jobs=across_jobs)

    return {"clusters": clusters, "link": link, "tests_of": tests_of}


def tests_markup(cluster: Cluster, anchor: BuildAnchor, *, across_jobs: bool) -> Markup:
    """The cluster's tests, each with its failures' count and, per job, the newest builds it failed in."""
    items = []
    for row in cluster.rows:
        per_job = []
        for job, builds in row.jobs:
            shown = " ".join(anchor(job, build) for build in builds[:SHOWN_BUILDS])
            more = len(builds) - SHOWN_BUILDS
            per_job.append((f"{escape(job)} " if across_jobs else "") + shown
                           + (f' <span class="muted">and {more} more</span>' if more > 0 else ""))
        items.append(f'<li>{escape(row.row)} <span class="muted">({row.count})</span>: {" · ".join(per_job)}</li>')
    return Markup("<ul>\n" + "\n".join(items) + "\n</ul>")
