"""The API server's 404 Not Found: an object already gone, or an API the cluster does not serve."""

from __future__ import annotations

from types import TracebackType

from kubernetes.client.exceptions import ApiException


def not_found(error: BaseException) -> bool:
    """The error is the API server's answer 404 Not Found."""
    return isinstance(error, ApiException) and error.status == 404


class ignore_not_found:
    """`with ignore_not_found() as answer:` swallows a 404 Not Found raised in the block (deleting what is gone
    already); `answer.not_found` tells whether it did (reading or creating where the API is absent)."""

    def __init__(self) -> None:
        self.not_found = False

    def __enter__(self) -> ignore_not_found:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> bool:
        self.not_found = error is not None and not_found(error)
        return self.not_found
