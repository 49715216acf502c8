"""The API server's answer to a refused request, as an error shows it."""

from __future__ import annotations

import json

import pytest
from kubernetes.client.exceptions import ApiException

from winsuite.k8s.api_answer import api_answer


def refused(status: int, reason: str, body: bytes | str | None) -> ApiException:
    return ApiException(status=status, reason=reason, body=body)  # the client passes the body as bytes


def test_a_status_answer_gives_its_own_message() -> None:
    status = {"kind": "Status", "status": "Failure", "reason": "Forbidden", "code": 403,
              "message": 'clusterrolebindings.rbac.authorization.k8s.io is forbidden: User "u" cannot create\n'
                         'resource "clusterrolebindings"'}
    assert api_answer(refused(403, "Forbidden", json.dumps(status).encode())) == (
        '403 Forbidden: clusterrolebindings.rbac.authorization.k8s.io is forbidden: User "u" cannot create '
        'resource "clusterrolebindings"')


@pytest.mark.parametrize("body", [b"<html>bad gateway</html>", "[1, 2]", None])
def test_an_answer_that_is_not_a_status_is_shown_as_sent(body: bytes | str | None) -> None:
    text = body.decode() if isinstance(body, bytes) else (body or "")
    assert api_answer(refused(502, "Bad Gateway", body)) == f"502 Bad Gateway: {text}".strip()


def test_a_long_answer_is_one_bounded_line() -> None:
    answer = api_answer(refused(422, "Unprocessable Entity", json.dumps({"message": "x\n" * 1000})))
    assert "\n" not in answer and len(answer) <= 400
