"""Which kubectl the tests run against a cluster: the one on PATH when its minor version is within one of the
server's (kubectl's version skew policy), else the pinned kubectl winsuite builds (`winsuite cluster build`)."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path

from winsuite import messages
from winsuite.authoring.facts import ClusterFacts
from winsuite.components.artifacts import catalog
from winsuite.components.artifacts import locate
from winsuite.inputs.pins import load_pins

VERSION_TIMEOUT = 30.0


@dataclasses.dataclass(frozen=True)
class KubectlChoice:
    path: str  # "" when there is none
    warning: str = ""


def pinned_kubectl() -> Path | None:
    """The pinned kubectl in winsuite's cache (or WINSUITE_BIN_DIR), when it was built."""
    artifact = next(a for a in catalog(load_pins()) if a.name == "kubectl")
    return locate(artifact, None)


def client_version(binary: str) -> str | None:
    """`kubectl version --client`'s gitVersion, None when the binary does not answer like kubectl."""
    try:
        done = subprocess.run([binary, "version", "--client", "--output=json"], capture_output=True, text=True,
                              timeout=VERSION_TIMEOUT, check=False)
        version = json.loads(done.stdout)["clientVersion"]["gitVersion"]
    except (OSError, subprocess.TimeoutExpired, ValueError, KeyError, TypeError):
        return None
    return str(version)


def minor_of(version: str) -> tuple[int, int] | None:
    match = re.match(r"v?(\d+)\.(\d+)", version)
    return (int(match.group(1)), int(match.group(2))) if match else None


def choose(server_version: str, on_path: str | None, on_path_version: str | None,
           pinned: Path | None) -> KubectlChoice:
    """PATH's kubectl if it is within one minor of the server, else the pinned one (with a warning when PATH's was
    passed over), else PATH's as it is (nothing better), else none."""
    pinned_path = str(pinned) if pinned is not None else ""
    if on_path is None:
        return KubectlChoice(pinned_path)
    version = on_path_version or "(no version)"
    ours, theirs = minor_of(server_version), minor_of(version)
    if ours is not None and theirs is not None and ours[0] == theirs[0] and abs(ours[1] - theirs[1]) <= 1:
        return KubectlChoice(on_path)
    if not pinned_path:
        return KubectlChoice(on_path)
    return KubectlChoice(pinned_path, messages.kubectl_skew(on_path, version, server_version, pinned_path))


def with_kubectl(facts: ClusterFacts) -> ClusterFacts:
    """The facts with the kubectl the run's tests use against this cluster (and a warning if PATH's was skipped)."""
    on_path = shutil.which("kubectl")
    choice = choose(facts.server_version, on_path, client_version(on_path) if on_path else None, pinned_kubectl())
    warnings = [*facts.warnings, choice.warning] if choice.warning else facts.warnings
    return dataclasses.replace(facts, kubectl=choice.path, warnings=warnings)
