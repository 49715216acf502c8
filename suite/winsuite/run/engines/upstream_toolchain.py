"""The binaries of the upstream engine: e2e.test (the user's, or built for the server's version) and the ginkgo CLI
of the version that e2e.test's Kubernetes release requires (its go.mod), both in winsuite's version-keyed cache."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from winsuite.components.artifacts import Group
from winsuite.components.artifacts import select
from winsuite.components.build import Builder
from winsuite.components.locks import file_lock
from winsuite.components.toolchain import download_module
from winsuite.components.toolchain import find_go
from winsuite.errors import UsageError
from winsuite.inputs.pins import load_pins
from winsuite.paths import cache_dir
from winsuite.versions import is_release_tag

GINKGO_MODULE = "github.com/onsi/ginkgo/v2"
GINKGO_ENV = "WINSUITE_GINKGO"  # a ginkgo CLI to use instead of the one installed into the cache
_GINKGO_REQUIRE = re.compile(rf"^\s*(?:require\s+)?{re.escape(GINKGO_MODULE)} (v\S+)", re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Toolchain:
    e2e_test: Path
    ginkgo: Path
    kubernetes_version: str  # what e2e.test reports (--version)
    ginkgo_version: str


def e2e_test_version(e2e_test: Path) -> str:
    """`e2e.test --version`: the Kubernetes release it was built from (v1.36.3)."""
    try:
        done = subprocess.run([str(e2e_test), "--version"], capture_output=True, text=True, timeout=60, check=False)
    except OSError as err:
        raise UsageError(f"--e2e-test {e2e_test}: cannot run it: {err.strerror or err}") from err
    version = (done.stdout.strip().splitlines() or [""])[-1].strip()
    if done.returncode != 0 or not is_release_tag(version):
        raise UsageError(f"--e2e-test {e2e_test}: not an e2e.test binary (`--version` said {version!r})")
    return version


def ginkgo_version_for(kubernetes_version: str) -> str:
    """The ginkgo version k8s.io/kubernetes at that release requires (read from its go.mod once, then kept)."""
    kept = cache_dir() / "bin" / "ginkgo-of" / kubernetes_version
    if kept.is_file():
        return kept.read_text().strip()
    go = find_go(load_pins().go)
    module = download_module(go, "k8s.io/kubernetes", kubernetes_version, cache_dir() / "work" / "gomod")
    found = _GINKGO_REQUIRE.search(module.gomod.read_text())
    if found is None:
        raise UsageError(f"k8s.io/kubernetes@{kubernetes_version}'s go.mod requires no {GINKGO_MODULE}")
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text(found.group(1) + "\n")
    return found.group(1)


def ginkgo_binary(version: str, report: Callable[[str], None]) -> Path:
    """The ginkgo CLI of `version`, installed from the Go module proxy into the cache once. Under a lock: two runs at
    once (an upstream run and an in-cluster run's image) would otherwise install it both, the second replacing the
    first one's entry while the first reads it."""
    target = cache_dir() / "bin" / f"ginkgo-{version}" / "ginkgo"
    if target.is_file():
        return target
    with file_lock(target.parent.with_name(f".ginkgo-{version}.lock")):
        if target.is_file():  # installed by the run that held the lock
            return target
        go = find_go(load_pins().go)
        report(f"installing the ginkgo CLI {version} into {target.parent}")
        staging = target.parent.with_name(target.parent.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)  # left by a killed install
        staging.mkdir(parents=True)
        env = dict(go.env(module_mode=False), GOBIN=str(staging))
        done = subprocess.run([go.executable, "install", f"{GINKGO_MODULE}/ginkgo@{version}"], env=env,
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise UsageError(f"cannot install the ginkgo CLI {version}: {done.stderr.strip().splitlines()[-1:]}")
        shutil.rmtree(target.parent, ignore_errors=True)  # an incomplete entry left by a killed install
        os.replace(staging, target.parent)  # atomic: a cache entry is whole or absent
    return target


def built_e2e_test(kubernetes_version: str, report: Callable[[str], None]) -> Path:
    """e2e.test of that release, built from the Go module proxy into the version-keyed cache (once)."""
    pins = dataclasses.replace(load_pins(), kubernetes=kubernetes_version)
    return Builder(pins, report).ensure(select(pins, [Group.E2E]))["e2e.test"]


def resolve(e2e_test: str | None, server_version: str, report: Callable[[str], None]) -> Toolchain:
    """The user's e2e.test (`--e2e-test`), or one built for the server's exact version, and its ginkgo."""
    if e2e_test:
        binary = Path(e2e_test).expanduser()
        if not (binary.is_file() and os.access(binary, os.X_OK)):
            raise UsageError(f"--e2e-test {binary}: not an executable file")
    else:
        binary = built_e2e_test(server_version, report)
    version = e2e_test_version(binary)
    given = os.environ.get(GINKGO_ENV)
    if given:  # winsuite's image carries the ginkgo of its e2e.test
        return Toolchain(binary, Path(given), version, "given by " + GINKGO_ENV)
    ginkgo = ginkgo_version_for(version)
    return Toolchain(binary, ginkgo_binary(ginkgo, report), version, ginkgo)
