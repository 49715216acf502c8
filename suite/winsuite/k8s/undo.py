"""Undoing what a test creates outside its namespace (cluster-scoped objects, kube-system)."""

from __future__ import annotations

from collections.abc import Callable

from kubernetes.client.exceptions import ApiException

from winsuite.k8s.not_found import ignore_not_found


class Undo:
    """Undo steps for what a test creates outside its namespace (cluster-scoped objects, kube-system), run
    last-first after the test; an object already gone is fine, any other error is raised once all ran."""

    def __init__(self) -> None:
        self._steps: list[tuple[str, Callable[[], object]]] = []

    def add(self, what: str, step: Callable[[], object]) -> None:
        self._steps.append((what, step))

    def run(self) -> None:
        failures = []
        for what, step in reversed(self._steps):
            try:
                with ignore_not_found():  # gone already: nothing to undo
                    step()
            except ApiException as err:
                failures.append(f"{what}: {err.status} {err.reason}")
            except Exception as err:  # every step gets its chance; the failures are reported together
                failures.append(f"{what}: {err}")
        self._steps.clear()
        if failures:
            raise AssertionError(f"failed to clean up: {'; '.join(failures)}")
