"""The API server's answer to a refused request, as an error shows it; a refusal of the credentials is the user's
error."""

from __future__ import annotations

import json

import pytest
from kubernetes.client.exceptions import ApiException
from urllib3 import HTTPHeaderDict

from winsuite.errors import ExitCode
from winsuite.errors import UsageError
from winsuite.k8s.api_answer import api_answer
from winsuite.k8s.api_answer import credentials_refused
from winsuite.k8s.api_answer import error_line
from winsuite.k8s.api_answer import error_text


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


@pytest.mark.parametrize("status", [401, 403])
def test_a_refusal_of_the_credentials_is_a_usage_error_naming_what_was_refused(status: int) -> None:
    body = json.dumps({"kind": "Status", "message": 'nodes is forbidden: User "u" cannot list resource "nodes"'})
    error = credentials_refused(refused(status, "Forbidden", body.encode()))
    assert isinstance(error, UsageError) and error.exit_code == ExitCode.USAGE_ERROR
    assert str(error) == (f"the API server refused a request made with these credentials: {status} Forbidden: "
                          'nodes is forbidden: User "u" cannot list resource "nodes"')


@pytest.mark.parametrize("error", [ApiException(status=404, reason="Not Found"),
                                   ApiException(status=422, reason="Unprocessable Entity"), ValueError("x")])
def test_other_errors_are_not_the_credentials(error: Exception) -> None:
    assert credentials_refused(error) is None


def test_an_error_line_never_dumps_the_answers_headers() -> None:
    error = refused(403, "Forbidden", json.dumps({"kind": "Status", "message": "leases is forbidden"}).encode())
    error.headers = HTTPHeaderDict({"Audit-Id": "0f9c", "Content-Type": "application/json"})
    assert "HTTPHeaderDict" in str(error)  # what the client's own text would show
    assert error_line(error) == error_text(error) == "403 Forbidden: leases is forbidden"
    assert error_line(ValueError("a\nb")) == "a b" and error_text(ValueError()) == "ValueError"
