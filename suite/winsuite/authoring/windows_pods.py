"""What a test's pods look like on a Windows target, declared next to the test so that a unit test renders them
without a cluster and compares them with golden files: a change to a Windows branch shows as a golden diff.

    @windows_pods(lambda target: [cpu_burn_pod(target, "0.5")], upstream="test/e2e/windows/cpu_limits.go:43")
    @cpu_limits.it("should not be exceeded after waiting 2 minutes", ...)
    def test_cpu_limits(api, namespace, target): ...

`render` must build the pods with the same functions the test calls; `upstream` is the file:line (of
kubernetes v1.36.3) they were checked against. A table test's `render` also receives the entry's value. A test
of the Windows tiers that creates no pod says so with `no_pods("why")`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., Any])
Manifest = dict[str, Any]
ATTRIBUTE = "__winsuite_windows_pods__"


@dataclasses.dataclass(frozen=True)
class WindowsPods:
    render: Callable[..., list[Manifest]] | None
    upstream: str
    no_pods_reason: str = ""


def windows_pods(render: Callable[..., list[Manifest]], *, upstream: str) -> Callable[[F], F]:
    """Declare how the test's pods are built for a Windows target (see the module's docstring)."""
    return _declare(WindowsPods(render, upstream))


def no_pods(reason: str) -> Callable[[F], F]:
    """Declare that the test creates no pod on a Windows target, and why."""
    return _declare(WindowsPods(None, "", reason))


def _declare(declared: WindowsPods) -> Callable[[F], F]:
    def decorate(fn: F) -> F:
        setattr(fn, ATTRIBUTE, declared)
        return fn

    return decorate


def declared(fn: Callable[..., Any]) -> WindowsPods | None:
    found = getattr(fn, ATTRIBUTE, None)
    return found if isinstance(found, WindowsPods) else None
