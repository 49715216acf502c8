"""A 404 Not Found from the API server is swallowed where asked, and told apart from every other error."""

from __future__ import annotations

import pytest
from kubernetes.client.exceptions import ApiException

from winsuite.k8s.not_found import ignore_not_found
from winsuite.k8s.not_found import not_found


def test_only_a_404_answer_is_not_found() -> None:
    assert not_found(ApiException(status=404, reason="Not Found"))
    assert not not_found(ApiException(status=409, reason="Conflict"))
    assert not not_found(LookupError("404"))


def test_a_404_in_the_block_is_swallowed_and_told() -> None:
    with ignore_not_found() as answer:
        raise ApiException(status=404, reason="Not Found")
    assert answer.not_found


def test_a_block_that_succeeds_found_its_object() -> None:
    with ignore_not_found() as answer:
        pass
    assert not answer.not_found


@pytest.mark.parametrize("error", [ApiException(status=403, reason="Forbidden"), ApiException(status=500),
                                   ConnectionError("refused")])
def test_every_other_error_passes(error: Exception) -> None:
    with pytest.raises(type(error)), ignore_not_found():
        raise error
