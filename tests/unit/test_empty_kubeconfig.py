"""An empty --kubeconfig is a usage error: a run never lands on $KUBECONFIG's or ~/.kube/config's cluster."""

from __future__ import annotations

import pytest

from winsuite.errors import UsageError
from winsuite.policy import options


@pytest.mark.parametrize("given", ["", "  "])
def test_an_empty_kubeconfig_is_a_usage_error_not_a_fallback(given: str) -> None:
    with pytest.raises(UsageError, match="never falls back to"):
        options.overrides({"winsuite_kubeconfig": given}.get)
