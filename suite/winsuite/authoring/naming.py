"""Upstream-style test names: areas, tags and text rendered as `[sig-x] Describe … It [Tag]`."""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any
from typing import TypeVar
from typing import cast

import pytest

from winsuite.authoring.capabilities import Capability

F = TypeVar("F", bound=Callable[..., Any])

# The pytest marker that carries a test's Spec; every winsuite test has it.
SPEC_MARKER = "e2e"


@dataclasses.dataclass(frozen=True)
class Tag:
    """A bracketed label such as `Serial`, `sig-node` or `Feature:Windows`."""

    value: str

    def render(self) -> str:
        return f"[{self.value}]"

    @property
    def family(self) -> str | None:
        return self.value.split(":", 1)[0] if ":" in self.value else None

    @property
    def marker(self) -> str:
        """The pytest marker for this tag: `Serial` -> serial, `Feature:Windows` -> feature_windows."""
        words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", self.value)
        return re.sub(r"[^0-9A-Za-z]+", "_", words).strip("_").lower()


def Area(sig: str) -> Tag:
    return Tag(sig)


def Feature(name: str) -> Tag:
    return Tag(f"Feature:{name}")


def FeatureGate(name: str) -> Tag:
    return Tag(f"FeatureGate:{name}")


Serial = Tag("Serial")
Slow = Tag("Slow")
Disruptive = Tag("Disruptive")
Flaky = Tag("Flaky")
LinuxOnly = Tag("LinuxOnly")
Conformance = Tag("Conformance")
NodeConformance = Tag("NodeConformance")
Privileged = Tag("Privileged")
ExcludedWindowsDocker = Tag("Excluded:WindowsDocker")

Segment = str | Tag


class Provokes(enum.Enum):
    """What a test causes on purpose: what the run observes of it is then no evidence of a broken cluster, for the
    test itself nor for one that ran before it."""

    PULL_FAILURES = "image pull failures"  # e.g. an absent image under imagePullPolicy Never
    NODE_DISRUPTION = "node disruption"  # its node restarts, goes NotReady, stops renewing its Lease


def render(segments: Iterable[Segment]) -> str:
    """Join text and tags with single spaces, as the e2e framework's registerInSuite does."""
    return " ".join(s.render() if isinstance(s, Tag) else s for s in segments if s != "")


@dataclasses.dataclass(frozen=True)
class Spec:
    """Everything winsuite knows about one test besides its body."""

    segments: tuple[Segment, ...]
    twin: str | None = None
    category: str | None = None
    needs: tuple[Capability, ...] = ()
    images: tuple[str, ...] = ()  # catalog image ids the test uses (for prepull lists; enforced at use)
    file: str = ""
    line: int = 0
    # The OS its pods are for when that is on purpose not the run's target (Linux pods kept off Windows nodes):
    # placement judges the pods by it instead.
    pods_os: str = ""
    provokes: tuple[Provokes, ...] = ()

    @property
    def full_name(self) -> str:
        return render(self.segments)

    @property
    def tags(self) -> tuple[Tag, ...]:
        return tuple(s for s in self.segments if isinstance(s, Tag))

    @property
    def area(self) -> str:
        first = self.segments[0] if self.segments else None
        return first.value if isinstance(first, Tag) else ""

    def has(self, tag: Tag) -> bool:
        return tag in self.tags

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"


@dataclasses.dataclass(frozen=True)
class Describe:
    """A container of tests: `Describe(Area("sig-node"), "Pods")`, nestable with `.describe(…)`."""

    segments: tuple[Segment, ...]

    def __init__(self, *segments: Segment) -> None:
        object.__setattr__(self, "segments", tuple(segments))

    def describe(self, *segments: Segment) -> Describe:
        return Describe(*self.segments, *segments)

    def it(
        self,
        *segments: Segment,
        twin: str | None = None,
        category: str | None = None,
        needs: Iterable[Capability] = (),
        images: Iterable[str] = (),
        pods_os: str = "",
        provokes: Iterable[Provokes] = (),
    ) -> Callable[[F], F]:
        """Declare a test. `twin` is the upstream full name it ports, which must render identically; `pods_os` the
        OS its pods are for when that is deliberately not the run's target; `provokes` what it causes on purpose
        (pull failures, node disruption), which the run's evidence then does not hold against it."""

        def decorate(fn: F) -> F:
            spec = Spec(
                segments=(*self.segments, *segments),
                twin=twin,
                category=category,
                needs=tuple(needs),
                images=tuple(images),
                file=inspect.getsourcefile(fn) or "",
                line=fn.__code__.co_firstlineno,
                pods_os=pods_os,
                provokes=tuple(provokes),
            )
            marked: Any = getattr(pytest.mark, SPEC_MARKER)(spec=spec)(fn)
            for tag in spec.tags:
                marked = getattr(pytest.mark, tag.marker)(marked)
            return cast(F, marked)

        return decorate


    def it_each(
        self,
        *segments: Segment,
        argname: str,
        entries: Mapping[str, object],
        category: str | None = None,
        needs: Iterable[Capability] = (),
        images: Iterable[str] = (),
        twins: Mapping[str, str] | None = None,
    ) -> Callable[[F], F]:
        """A table of tests (like ginkgo's DescribeTable): one test per entry, `{entry}` in the text names it."""

        def decorate(fn: F) -> F:
            params = []
            for entry, value in entries.items():
                spec = Spec(
                    segments=(*self.segments, *(s.format(entry=entry) if isinstance(s, str) else s for s in segments)),
                    twin=(twins or {}).get(entry),
                    category=category,
                    needs=tuple(needs),
                    images=tuple(images),
                    file=inspect.getsourcefile(fn) or "",
                    line=fn.__code__.co_firstlineno,
                )
                marks = [getattr(pytest.mark, SPEC_MARKER)(spec=spec)]
                marks += [getattr(pytest.mark, tag.marker) for tag in spec.tags]
                params.append(pytest.param(value, id=entry, marks=marks))
            return cast(F, pytest.mark.parametrize(argname, params)(fn))

        return decorate


def specs_of_function(fn: Callable[..., Any]) -> list[tuple[Spec, str | None]]:
    """The Spec(s) a test function declares, with the parameter id: one for `it`, one per `it_each` entry."""
    specs: list[tuple[Spec, str | None]] = []
    for mark in getattr(fn, "pytestmark", []):
        if mark.name == SPEC_MARKER and isinstance(mark.kwargs.get("spec"), Spec):
            specs.append((mark.kwargs["spec"], None))
        elif mark.name == "parametrize":
            for param in mark.args[1]:
                specs += [(m.kwargs["spec"], param.id) for m in getattr(param, "marks", ()) if m.name == SPEC_MARKER]
    return specs


def spec_of(item: pytest.Item) -> Spec | None:
    """The Spec of a collected winsuite test, or None for any other pytest item."""
    marker = item.get_closest_marker(SPEC_MARKER)
    if marker is None:
        return None
    spec = marker.kwargs.get("spec")
    return spec if isinstance(spec, Spec) else None
