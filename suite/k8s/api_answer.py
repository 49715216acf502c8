"""What the API server answered to a refused request, in one line: its status and its own message."""

from __future__ import annotations

import json

from kubernetes.client.exceptions import ApiException

from winsuite.errors import one_line


def api_answer(err: ApiException) -> str:
    """`403 Forbidden: <the Status object's message>` (the body as sent when it is not a Status)."""
    body = err.body.decode(errors="replace") if isinstance(err.body, bytes) else str(err.body or "")
    try:
        status = json.loads(body)
    except ValueError:
        status = None
    message = status.get("message") if isinstance(status, dict) else None
    return one_line(f"{err.status} {err.reason}: {message if isinstance(message, str) else body}")
