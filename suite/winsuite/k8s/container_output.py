"""What containers print: waiting for their logs, and upstream's TestContainerOutput checks."""

from __future__ import annotations

import re
import stat
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from kubernetes import client

from winsuite.k8s import pods
from winsuite.k8s import waits
from winsuite.k8s.manifests import Manifest
from winsuite.k8s.pods import POD_START_TIMEOUT
from winsuite.k8s.pods import read_logs


def wait_for_logs(api: client.ApiClient, namespace: str, name: str, container: str, *, what: str,
                  matches: Callable[[str], bool], timeout: float = POD_START_TIMEOUT, **options: Any) -> str:
    """Poll the container's logs until `matches(logs)`; return them."""

    def check() -> str:
        ok, text = read_logs(api, namespace, name, container, **options)
        assert ok and matches(text), text
        return text

    return waits.poll(f"logs of {namespace}/{name}/{container} to show {what}", check, timeout=timeout)


def matcher(expected: str, *, regex: bool) -> Callable[[str], bool]:
    """gomega's ContainSubstring, or MatchRegexp for TestContainerOutputRegexp."""
    if regex:
        pattern = re.compile(expected)
        return lambda text: pattern.search(text) is not None
    return lambda text: expected in text


def file_mode_regex(path: str, mask: int | None = None) -> str:
    """getFileModeRegex: agnhost mounttest's --file_mode line, 0644 (Linux) or 0775 (Windows) by default."""
    linux, windows = (0o644, 0o775) if mask is None else (mask, mask)
    linux_line = f'mode of file "{path}": {stat.filemode(stat.S_IFREG | linux)}'
    windows_line = f'mode of Windows file "{path}": {stat.filemode(stat.S_IFREG | windows)}'
    return f"({re.escape(linux_line)}|{re.escape(windows_line)})"


def expect_output(api: client.ApiClient, namespace: str, manifest: Manifest,
                  expected: Mapping[str, Iterable[str]] | Iterable[str], *, regex: bool = False,
                  timeout: float = POD_START_TIMEOUT) -> dict[str, str]:
    """TestContainerOutput / MatchMultipleContainerOutputs: run the pod to success, then every expected
    string (or regex) is in its container's logs. A plain list is about the first container."""
    name = manifest["metadata"]["name"]
    if not isinstance(expected, Mapping):
        expected = {manifest["spec"]["containers"][0]["name"]: list(expected)}
    pods.create(api, namespace, manifest)
    try:
        pods.wait_for_pod(api, namespace, name, state="Succeeded", timeout=timeout)
    except AssertionError as err:
        spec = manifest["spec"]
        every = [c["name"] for c in spec.get("initContainers", []) + spec["containers"]]
        dump = pods.output_of(api, namespace, name, every)
        raise AssertionError(f"expected pod {name} to succeed: {err}\ncontainer output:\n{dump}") from err
    outputs = {}
    for each, wanted in expected.items():
        text = pods.logs(api, namespace, name, container=each)
        missing = [w for w in wanted if not matcher(w, regex=regex)(text)]
        assert not missing, f"expected {missing} in the output of container {each}, got:\n{text}"
        outputs[each] = text
    return outputs
