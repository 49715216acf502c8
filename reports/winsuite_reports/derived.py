"""What a report derives from a job's builds besides its grid (its failures clustered, where its rows ran), kept in the
report's cache and brought up to date with the builds that are new since, as the grid is (reports.job_grid)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol
from typing import TypeVar

from winsuite_reports.build_codec import UNDECODABLE
from winsuite_reports.cache import BuildCache
from winsuite_reports.cache import new_since
from winsuite_reports.prow import ParsedBuild

S = TypeVar("S")


class Derivation(Protocol[S]):
    """How one kind of state is made from builds, extended by new ones, and stored."""

    kind: str

    def made(self, builds: Sequence[ParsedBuild]) -> S:
        """The state of `builds` (newest first)."""

    def extended(self, state: S, width: int, new: Sequence[ParsedBuild], keep: int) -> S | None:
        """The state of `width` builds with the `new` ones (newest first) in front and only the newest `keep` of the
        stored builds; None when that cannot be done for less than making it anew."""

    def dumps(self, state: S) -> str: ...

    def loads(self, text: str) -> S:
        """The stored state; one of UNDECODABLE when the text is not one."""


def derive(derivation: Derivation[S], builds: Sequence[ParsedBuild], *, cache: BuildCache | None = None,
           job_dir: Path | None = None, listed: Sequence[tuple[str, str]] = ()) -> S:
    """The state of `builds` (newest first): with a cache, the stored one brought up to date (`listed` names the
    builds as the cache does: key and fingerprint), and the cache then holds it as it is now."""
    if cache is None or job_dir is None:
        return derivation.made(builds)
    listed = list(listed)
    state, changed = _brought_up_to_date(derivation, cache.get_derived(job_dir, derivation.kind), builds, listed)
    if changed:
        cache.put_derived(job_dir, derivation.kind, listed, derivation.dumps(state))
    return state


def _brought_up_to_date(derivation: Derivation[S], stored: tuple[list[tuple[str, str]], str] | None,
                        builds: Sequence[ParsedBuild], listed: list[tuple[str, str]]) -> tuple[S, bool]:
    """The stored state extended by the new builds (made anew when it cannot be), and whether it changed."""
    if stored is None:
        return derivation.made(builds), True
    stored_builds, text = stored
    new = new_since(listed, stored_builds)
    if new is None:
        return derivation.made(builds), True
    try:
        state = derivation.loads(text)
    except UNDECODABLE:
        return derivation.made(builds), True
    if new == 0 and len(stored_builds) == len(listed):
        return state, False
    extended = derivation.extended(state, len(stored_builds), builds[:new], len(listed) - new)
    return (derivation.made(builds) if extended is None else extended), True
