"""The images a job's selection uses, resolved per target OS and Windows build: `winsuite images` prints them,
`winsuite prepull` pulls them on the nodes before the tests."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from winsuite.authoring.facts import ClusterFacts
from winsuite.authoring.targeting import NodeOS
from winsuite.inputs.images import ImageUnavailable
from winsuite.policy.catalog import Entry
from winsuite.policy.run_config import RunConfig
from winsuite.policy.selection import Outcome

# The sandbox image every pod needs, whatever the test declares.
ALWAYS = ("pause",)
# Registries tests use because they cannot be pulled from (no such registry, credentials needed): never prepulled.
UNPULLABLE_REGISTRIES = frozenset({"invalidRegistry", "privateRegistry"})


@dataclasses.dataclass(frozen=True)
class ResolvedImage:
    build: str | None  # the Windows build (None: the target OS's only variant)
    image_id: str
    reference: str  # "" when the image has no variant for the build
    note: str = ""  # why there is no reference


def used_images(config: RunConfig, entries: Iterable[Entry], facts: ClusterFacts | None = None) -> set[str]:
    """The catalog image ids the tests the job runs declare, and the sandbox image; with the cluster's facts,
    only of the tests the cluster can run (the others are skipped before they create a pod)."""
    used = set(ALWAYS)
    for entry in entries:
        if config.policy.decide(entry.spec.full_name, entry.spec.tags).outcome is not Outcome.RUN:
            continue
        if facts is None or facts.skip_reason(entry.spec.needs, config.target_os) is None:
            used |= set(entry.spec.images)
    return used


def resolve_all(config: RunConfig, used: set[str], builds: list[str] | None = None) -> list[ResolvedImage]:
    """Every used image resolved through the run's repo list, per Windows build on a Windows run."""
    targets: list[str | None] = [None]
    if config.target_os == NodeOS.WINDOWS:
        targets = list(builds or config.images.windows_builds())
    resolved = []
    for build in targets:
        for image_id in sorted(used):
            try:
                ref = config.images.resolve(image_id, config.repo_list, target_os=config.target_os,
                                            windows_build=build)
            except ImageUnavailable as err:
                resolved.append(ResolvedImage(build, image_id, "", str(err)))
            else:
                resolved.append(ResolvedImage(build, image_id, ref))
    return resolved


def to_prepull(config: RunConfig, entries: Iterable[Entry], facts: ClusterFacts) -> list[ResolvedImage]:
    """What a prepull pulls: the images of the tests the cluster can run that resolve, less those tests use for
    failing to pull."""
    used = {i for i in used_images(config, entries, facts)
            if config.images.image(i).registry_key not in UNPULLABLE_REGISTRIES}
    return [r for r in resolve_all(config, used) if r.reference]
