"""What the API server answered to a refused request, in one line: its status and its own message; a refusal of the
credentials as the user's error it is. Never str() of the client's ApiException where a person reads it: that text
dumps the answer's HTTP headers (HTTPHeaderDict({'Audit-Id': …}))."""

from __future__ import annotations

import json

from kubernetes.client.exceptions import ApiException

from winsuite.errors import UsageError
from winsuite.errors import one_line

CREDENTIALS_REFUSED = (401, 403)  # not authenticated; not allowed


def answer_body(err: ApiException) -> str:
    """The answer's body as text (the client keeps it as bytes or str, or None)."""
    return err.body.decode(errors="replace") if isinstance(err.body, bytes) else str(err.body or "")


def api_answer(err: ApiException) -> str:
    """`403 Forbidden: <the Status object's message>` (the body as sent when it is not a Status)."""
    body = answer_body(err)
    try:
        status = json.loads(body)
    except ValueError:
        status = None
    message = status.get("message") if isinstance(status, dict) else None
    return one_line(f"{err.status} {err.reason}: {message if isinstance(message, str) else body}")


def error_text(err: BaseException) -> str:
    """Any error's text: the API server's answer for an ApiException, else the exception's own words."""
    return api_answer(err) if isinstance(err, ApiException) else str(err) or type(err).__name__


def error_line(err: BaseException, limit: int = 400) -> str:
    """Any error's text as one line of at most `limit` characters."""
    return one_line(error_text(err), limit)


def credentials_refused(err: BaseException) -> UsageError | None:
    """A request refused for the credentials it was made with (their owner may not do what the run needs) as a usage
    error naming what was refused; None for any other error."""
    if isinstance(err, ApiException) and err.status in CREDENTIALS_REFUSED:
        return UsageError(f"the API server refused a request made with these credentials: {api_answer(err)}")
    return None
