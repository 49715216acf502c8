"""The Go toolchain and module proxy: found, checked, and turned into one-line errors when absent."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
from pathlib import Path

from winsuite.errors import UsageError
from winsuite.versions import go_version

# Errors of `go mod download` that mean the proxy was not reached at all (rather than refusing a version).
_UNREACHABLE_MARKERS = (
    "dial tcp",
    "no such host",
    "connection refused",
    "i/o timeout",
    "network is unreachable",
    "tls:",
)
PREBUILT_HINT = "or give prebuilt binaries with --bin-dir / WINSUITE_BIN_DIR"


@dataclasses.dataclass(frozen=True)
class Go:
    executable: str
    version: str  # e.g. 1.26.8
    proxy: str

    def env(self, *, module_mode: bool = True) -> dict[str, str]:
        """Environment for builds: static binaries, the local toolchain only, go.mod/go.sum filled in."""
        env = dict(os.environ)
        env.update(CGO_ENABLED="0", GOTOOLCHAIN="local", GOFLAGS="-mod=mod" if module_mode else "")
        return env


@dataclasses.dataclass(frozen=True)
class Module:
    """A module version in the module cache: its extracted directory and its go.mod."""

    path: str
    version: str
    dir: Path
    gomod: Path


def find_go(minimum: str) -> Go:
    """The `go` on PATH if it is at least `minimum`; otherwise one line saying what to install."""
    executable = shutil.which("go")
    if executable is None:
        raise UsageError(
            f"the Go toolchain is not on PATH: install Go >= {minimum} (https://go.dev/dl/) {PREBUILT_HINT}"
        )
    proc = subprocess.run(
        [executable, "env", "-json", "GOVERSION", "GOPROXY"], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise UsageError(f"`{executable} env` failed: {proc.stderr.strip()}; reinstall Go >= {minimum}")
    values = json.loads(proc.stdout)
    version = str(values["GOVERSION"]).removeprefix("go")
    if not _is_at_least(version, minimum):
        raise UsageError(
            f"{executable} is Go {version}; the pinned Kubernetes needs Go >= {minimum} (suite/winsuite/pins.yaml): "
            f"install a newer Go {PREBUILT_HINT}"
        )
    return Go(executable, version, str(values["GOPROXY"]))


def _is_at_least(version: str, minimum: str) -> bool:
    """A development build ("devel …") counts as too old: its version says nothing."""
    try:
        return go_version(version) >= go_version(minimum)
    except ValueError:
        return False


def download_module(go: Go, path: str, version: str, workdir: Path) -> Module:
    """`go mod download` one module version (served from the module cache when it is already there)."""
    workdir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [go.executable, "mod", "download", "-json", f"{path}@{version}"],
        cwd=workdir,
        env=go.env(module_mode=False),
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        info = json.loads(proc.stdout)
    except json.JSONDecodeError:
        info = {"Error": (proc.stderr or proc.stdout).strip()}
    error = str(info.get("Error") or "")
    if proc.returncode != 0 or error:
        error = error or proc.stderr.strip()
        if any(marker in error for marker in _UNREACHABLE_MARKERS):
            raise UsageError(
                f"cannot reach the Go module proxy (GOPROXY={go.proxy}) to fetch {path}@{version}: "
                f"{error.splitlines()[-1]}; allow access to it or set GOPROXY, {PREBUILT_HINT}"
            )
        raise UsageError(
            f"the Go module proxy (GOPROXY={go.proxy}) cannot serve {path}@{version}: "
            f"{error.splitlines()[-1] if error else 'no detail'}; check the pin in suite/winsuite/pins.yaml"
        )
    return Module(path, version, Path(info["Dir"]), Path(info["GoMod"]))
