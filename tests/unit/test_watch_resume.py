"""Where a watch goes on from, and what a failed watch request means (no cluster: the decisions alone)."""

from __future__ import annotations

import pytest
import urllib3
from kubernetes.client.exceptions import ApiException

from winsuite.k8s.waits import ResumePoint


def event(kind: str, version: str | None) -> dict[str, object]:
    metadata = {"name": "p", "resourceVersion": version} if version else {"name": "p"}
    return {"type": kind, "raw_object": {"kind": "Pod", "metadata": metadata}, "object": None}


def test_changes_advance_the_resume_point_and_are_handed_on() -> None:
    point = ResumePoint("100")
    assert point.advance(event("ADDED", "101"))
    assert point.advance(event("MODIFIED", "105"))
    assert point.advance(event("DELETED", "107"))
    assert point.resource_version == "107"


def test_bookmarks_advance_the_resume_point_without_being_a_change() -> None:
    point = ResumePoint("100")
    assert not point.advance(event("BOOKMARK", "250"))
    assert point.resource_version == "250"


def test_an_event_without_a_version_keeps_the_last_one() -> None:
    point = ResumePoint("100")
    assert point.advance(event("MODIFIED", None))
    assert point.resource_version == "100"


def test_an_error_event_is_not_a_change() -> None:
    point = ResumePoint("100")
    assert not point.advance({"type": "ERROR", "raw_object": {"code": 410}, "object": None})
    assert point.resource_version == "100"


@pytest.mark.parametrize(("error", "action"), [
    (ApiException(status=410, reason="Gone: too old resource version"), "relist"),
    (ApiException(status=503, reason="Service Unavailable"), "resume"),
    (ApiException(status=429, reason="Too Many Requests"), "resume"),
    (urllib3.exceptions.ProtocolError("Connection broken: IncompleteRead"), "resume"),
    (urllib3.exceptions.ReadTimeoutError(None, "/api", "read timed out"), "resume"),  # type: ignore[arg-type]
    (ConnectionResetError("reset by peer"), "resume"),
    (ApiException(status=403, reason="Forbidden"), "fail"),
    (ApiException(status=400, reason="Bad Request"), "fail"),
    (ValueError("a bug"), "fail"),
])
def test_failed_watch_requests_are_classified(error: BaseException, action: str) -> None:
    assert ResumePoint.classify(error) == action
