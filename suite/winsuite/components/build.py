"""Build the embedded cluster's artifacts into winsuite's cache, once per pinned version, atomically."""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from winsuite.components import busybox
from winsuite.components.artifacts import OWN_GO_DIR
from winsuite.components.artifacts import Artifact
from winsuite.components.artifacts import Recipe
from winsuite.components.artifacts import Source
from winsuite.components.artifacts import cached_path
from winsuite.components.artifacts import locate
from winsuite.components.artifacts import sources
from winsuite.components.gomodule import parse_mod
from winsuite.components.gomodule import render_wrapper
from winsuite.components.gomodule import version_ldflags
from winsuite.components.locks import file_lock
from winsuite.components.progress import Reporter
from winsuite.components.progress import elapsed
from winsuite.components.progress import run_step
from winsuite.components.toolchain import Go
from winsuite.components.toolchain import Module
from winsuite.components.toolchain import download_module
from winsuite.components.toolchain import find_go
from winsuite.errors import UsageError
from winsuite.inputs.pins import Pins
from winsuite.paths import cache_dir

STRIP = "-s -w"


class Builder:
    """Finds each artifact (bin directory, then cache) and builds the missing ones into the cache."""

    def __init__(self, pins: Pins, report: Reporter, bin_dir: Path | None = None) -> None:
        self.pins = pins
        self.report = report
        self.bin_dir = bin_dir
        self._go: Go | None = None
        self._modules: dict[Source, Module] = {}

    def missing(self, artifacts: Sequence[Artifact]) -> list[Artifact]:
        return [artifact for artifact in artifacts if locate(artifact, self.bin_dir) is None]

    def ensure(self, artifacts: Sequence[Artifact]) -> dict[str, Path]:
        """Paths of all artifacts, building what is missing (nothing to do when all are present)."""
        if self.missing(artifacts):
            with file_lock(cache_dir() / "bin" / ".build.lock"):  # a second build waits, then finds it done
                todo = self.missing(artifacts)  # another process may have built them while we waited
                if todo:
                    self._build_all(todo)
        return {artifact.name: self._found(artifact) for artifact in artifacts}

    def _found(self, artifact: Artifact) -> Path:
        path = locate(artifact, self.bin_dir)
        if path is None:
            raise UsageError(
                f"{artifact.name} is missing after the build; expected at {cached_path(artifact)}"
            )
        return path

    def _build_all(self, todo: Sequence[Artifact]) -> None:
        started = time.monotonic()
        self._toolchain()  # every recipe starts from the module proxy: say now if Go is missing
        self.report(
            f"building {len(todo)} artifact(s) into {cache_dir() / 'bin'}: {', '.join(a.name for a in todo)}"
        )
        for index, artifact in enumerate(todo, 1):
            dest = cached_path(artifact)
            dest.parent.mkdir(parents=True, exist_ok=True)
            for stale in dest.parent.glob(".tmp-*"):  # left by an interrupted build (we hold the lock)
                shutil.rmtree(stale, ignore_errors=True)
            scratch = dest.parent / f".tmp-{artifact.name}-{os.getpid()}"
            scratch.mkdir()
            try:
                label = f"[{index}/{len(todo)}] {artifact.name} {artifact.source.version}"
                self.report(f"{label}: {artifact.recipe.value} …")
                step_started = time.monotonic()
                built = self._build_one(artifact, scratch, label)
                os.replace(built, dest)  # atomic: a path in the cache is always a complete artifact
                self.report(f"{label}: done in {elapsed(time.monotonic() - step_started)}")
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
        self.report(f"built {len(todo)} artifact(s) in {elapsed(time.monotonic() - started)}")

    def _build_one(self, artifact: Artifact, scratch: Path, label: str) -> Path:
        out = scratch / artifact.name
        log = cache_dir() / "build" / "logs" / f"{artifact.name}.log"
        if artifact.recipe is Recipe.MODULE_FILES:
            _copy_tree(self._module(artifact.source).dir / artifact.target, out)
            return out
        if artifact.recipe is Recipe.C_STATIC:
            self._compile_c(artifact, out, label, log)
            return out
        if artifact.recipe is Recipe.BUSYBOX:
            busybox.build(artifact.source.version, self.pins.busybox_sha256, scratch, out, label, log.parent,
                          self.report)
            return out
        go = self._toolchain()
        if artifact.recipe is Recipe.GO_INSTALL:
            gobin = dict(go.env(module_mode=False), GOBIN=str(scratch))
            tags = ["-tags", ",".join(artifact.build_tags)] if artifact.build_tags else []
            argv = [
                go.executable,
                "install",
                "-trimpath",
                *tags,
                "-ldflags",
                self._ldflags(artifact),
                f"{artifact.target}@{artifact.source.version}",
            ]
            run_step(argv, label=label, log=log, report=self.report, cwd=scratch, env=gobin)
            return scratch / artifact.target.rsplit("/", 1)[-1]
        if artifact.recipe is Recipe.GO_BUILD_OWN:
            return self._build_own(artifact, out, label, log)
        wrapper = self._wrapper(artifact.source)
        verb = ["test", "-c"] if artifact.recipe is Recipe.GO_TEST else ["build"]
        argv = [
            go.executable,
            *verb,
            "-trimpath",
            "-ldflags",
            self._ldflags(artifact),
            "-o",
            str(out),
            artifact.target,
        ]
        run_step(argv, label=label, log=log, report=self.report, cwd=wrapper, env=go.env())
        return out

    def _build_own(self, artifact: Artifact, out: Path, label: str, log: Path) -> Path:
        """One of winsuite's own Go programs, in a module of its own that resolves the Kubernetes modules as the
        Kubernetes wrapper does (the same versions, so the build reuses their compiled packages)."""
        go = self._toolchain()
        kubernetes = sources(self.pins)["kubernetes"]
        module = cache_dir() / "build" / artifact.source.cache_name
        shutil.rmtree(module, ignore_errors=True)
        (module / artifact.target).mkdir(parents=True)
        wrapped = parse_mod(self._module(kubernetes).gomod.read_text())
        module_path = f"winsuite.local/build/{artifact.name}"
        (module / "go.mod").write_text(render_wrapper(module_path, kubernetes.module, kubernetes.version, wrapped))
        for source in sorted((OWN_GO_DIR / artifact.target).glob("*.go")):
            shutil.copyfile(source, module / artifact.target / source.name)
        argv = [go.executable, "build", "-trimpath", "-ldflags", STRIP, "-o", str(out), f"./{artifact.target}"]
        run_step(argv, label=label, log=log, report=self.report, cwd=module, env=go.env())
        return out

    def _ldflags(self, artifact: Artifact) -> str:
        if artifact.version_variable:
            return f"{STRIP} -X {artifact.version_variable}={artifact.source.version}"
        if artifact.source.key != "kubernetes":
            return STRIP
        flags = [STRIP, *version_ldflags(self.pins.kubernetes)]
        if artifact.name == "agnhost":  # agnhost reports the image version its VERSION file names
            version_file = self._module(artifact.source).dir / "test/images/agnhost/VERSION"
            flags.append(f"-X main.Version={version_file.read_text().strip()}")
        return " ".join(flags)

    def _compile_c(self, artifact: Artifact, out: Path, label: str, log: Path) -> None:
        gcc = shutil.which("gcc")
        if gcc is None:
            raise UsageError(
                f"gcc is not on PATH; {artifact.name} is compiled from {artifact.target}: "
                "apt-get install -y --no-install-recommends gcc libc6-dev (see `winsuite cluster deps`)"
            )
        source = self._module(artifact.source).dir / artifact.target
        makefile = (source.parent.parent / "Makefile").read_text()
        tag = re.search(r"^TAG \?= (\S+)$", makefile, re.MULTILINE)
        version = f"v{tag.group(1)}" if tag else artifact.source.version
        argv = [
            gcc,
            "-Os",
            "-Wall",
            "-Werror",
            "-static",
            f"-DVERSION={version}",
            "-o",
            str(out),
            str(source),
        ]
        run_step(argv, label=label, log=log, report=self.report)

    def _toolchain(self) -> Go:
        if self._go is None:
            self._go = find_go(self.pins.go)
        return self._go

    def _module(self, source: Source) -> Module:
        if source not in self._modules:
            self._modules[source] = download_module(
                self._toolchain(), source.module, source.version, cache_dir() / "build"
            )
        return self._modules[source]

    def _wrapper(self, source: Source) -> Path:
        """The wrapper module's directory; its go.mod is generated once and then completed by `go build`."""
        wrapper = cache_dir() / "build" / source.cache_name
        gomod = wrapper / "go.mod"
        if not gomod.exists():
            wrapped = parse_mod(self._module(source).gomod.read_text())
            text = render_wrapper(
                f"winsuite.local/build/{source.key}", source.module, source.version, wrapped
            )
            wrapper.mkdir(parents=True, exist_ok=True)
            partial = gomod.with_suffix(".tmp")
            partial.write_text(text)
            os.replace(partial, gomod)
        return wrapper


def _copy_tree(source: Path, dest: Path) -> None:
    """Copy files without their modes: the module cache is read-only, the copy must stay removable."""
    for path in sorted(source.rglob("*")):
        target = dest / path.relative_to(source)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
