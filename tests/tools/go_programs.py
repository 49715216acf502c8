"""Go programs the tests run, built from the Go module proxy once per module version into winsuite's cache."""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from winsuite.components.locks import file_lock
from winsuite.components.progress import Reporter
from winsuite.components.progress import elapsed
from winsuite.components.progress import run_step
from winsuite.components.progress import stderr_reporter
from winsuite.components.toolchain import Go
from winsuite.components.toolchain import find_go
from winsuite.paths import cache_dir

STRIP = "-s -w"


@dataclass(frozen=True)
class GoPrograms:
    """Main packages of one module version (plus packages of our own that import it), built in a wrapper module.

    `programs` maps each binary's name to its package: an import path of the module, or `./<dir>` for one of
    `local_packages` (wrapper directory -> the directory of Go files copied into it)."""

    key: str  # names the cache directory
    module: str
    version: str
    minimum_go: str
    programs: Mapping[str, str]
    local_packages: Mapping[str, Path] = field(default_factory=dict)

    @property
    def cache_name(self) -> str:
        """Keyed by the module's version, and by the source of our own packages when there are any."""
        if not self.local_packages:
            return f"{self.key}-{self.version}"
        digest = hashlib.sha256()
        for directory in sorted(self.local_packages):
            for path in sorted(self.local_packages[directory].glob("*.go")):
                digest.update(f"{directory}/{path.name}\0".encode() + path.read_bytes())
        return f"{self.key}-{self.version}-{digest.hexdigest()[:12]}"

    @property
    def directory(self) -> Path:
        return cache_dir() / "bin" / self.cache_name

    def paths(self) -> dict[str, Path]:
        return {name: self.directory / name for name in self.programs}

    def built(self) -> bool:
        return all(os.access(path, os.X_OK) for path in self.paths().values())


class GoMissing(Exception):
    """No Go toolchain, or too old a one, to build programs the cache lacks; the message says what to install."""


def ensure_built(programs: GoPrograms, report: Reporter = stderr_reporter) -> dict[str, Path]:
    """The programs' paths, building them first when the cache lacks them.

    Raises GoMissing when they must be built and Go is missing or too old, BuildFailed (with the log's tail) when
    a build fails."""
    if not programs.built():
        go = _go(programs)
        with file_lock(cache_dir() / "bin" / f".{programs.key}.lock"):  # a second build waits, then finds it done
            if not programs.built():
                _build(programs, go, report)
    return programs.paths()


def _go(programs: GoPrograms) -> Go:
    needs = f"{programs.key} {programs.version} is not built in {programs.directory} and building it needs Go >= "
    if shutil.which("go") is None:
        raise GoMissing(f"{needs}{programs.minimum_go} on PATH (https://go.dev/dl/); found none")
    go = find_go("0")
    if _release(go.version) < _release(programs.minimum_go):
        raise GoMissing(f"{needs}{programs.minimum_go}; found Go {go.version} ({go.executable})")
    return go


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:3] if part.isdigit())


def _build(programs: GoPrograms, go: Go, report: Reporter) -> None:
    started = time.monotonic()
    wrapper = _wrapper(programs, go)
    scratch = programs.directory.with_name(f".tmp-{programs.cache_name}-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    log = cache_dir() / "build" / "logs" / f"{programs.key}.log"
    label = f"{programs.key} {programs.version} ({', '.join(programs.programs)})"
    report(f"building {label} into {programs.directory} …")
    try:
        for name, package in programs.programs.items():
            argv = [go.executable, "build", "-trimpath", "-ldflags", STRIP, "-o", str(scratch / name), package]
            run_step(argv, label=f"{label}: {name}", log=log, report=report, cwd=wrapper, env=go.env())
        shutil.rmtree(programs.directory, ignore_errors=True)
        os.replace(scratch, programs.directory)  # atomic: a directory in the cache is always a complete build
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report(f"built {label} in {elapsed(time.monotonic() - started)}")


def _wrapper(programs: GoPrograms, go: Go) -> Path:
    """A module that requires module@version (its go.sum filled in by the first build) and holds our packages."""
    wrapper = cache_dir() / "build" / programs.cache_name
    wrapper.mkdir(parents=True, exist_ok=True)
    gomod = wrapper / "go.mod"
    if not gomod.exists():
        require = f"require {programs.module} {programs.version}"
        text = f"module winsuite.local/{programs.key}\n\ngo {go.version}\n\n{require}\n"
        partial = gomod.with_suffix(".tmp")
        partial.write_text(text)
        os.replace(partial, gomod)
    for directory, source in programs.local_packages.items():
        target = wrapper / directory
        target.mkdir(exist_ok=True)
        for path in sorted(source.glob("*.go")):
            shutil.copyfile(path, target / path.name)
    return wrapper
