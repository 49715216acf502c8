"""winsuite's own image, made on this machine (an OCI archive, no registry, no Docker) for the embedded cluster.

The same content as `Containerfile` builds for a registry, from what this machine runs: this Python interpreter with
the libraries it links, its standard library, winsuite and its runtime dependencies (not the dev extras) under
/opt/winsuite/site-packages, compiled to unchecked-hash bytecode (layers carry mtime 0, so timestamp-checked bytecode
would be compiled again in every process), and the pinned `e2e.test`, ginkgo and kubectl. It runs as a non-root
user. The archive is cached by a key of its inputs and imported into the real node's containerd.
"""

from __future__ import annotations

import compileall
import hashlib
import os
import py_compile
import shutil
import sys
import sysconfig
from collections.abc import Callable
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

from winsuite import paths
from winsuite.components.images import shared_libraries
from winsuite.components.locks import file_lock
from winsuite.components.ociimage import Entry
from winsuite.components.ociimage import ImageSpec
from winsuite.components.ociimage import Layer
from winsuite.components.ociimage import write_archive

REPOSITORY = "winsuite.local/winsuite"
SITE = "/opt/winsuite/site-packages"
# The interpreter and its standard library sit under one prefix of the image's own, wherever this machine has them
# (/usr, pyenv, a build of one's own): the interpreter finds its library from its own place.
PYTHON_HOME = "/opt/winsuite/python"
PYTHON = f"{PYTHON_HOME}/bin/python3"
STDLIB = f"{PYTHON_HOME}/lib/python{sys.version_info.major}.{sys.version_info.minor}"
USER_ID = 65532  # the conventional non-root id of distroless images
BIN = "/usr/local/bin"
# What a test run never imports: left out of the standard library copy.
_STDLIB_LEFT_OUT = frozenset({"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "site-packages",
                    "dist-packages", "__pycache__", "pydoc_data"})
ENV = {"PYTHONHOME": PYTHON_HOME, "PYTHONPATH": SITE, "PYTHONUNBUFFERED": "1", "HOME": "/tmp",
       "WINSUITE_E2E_TEST": f"{BIN}/e2e.test", "WINSUITE_GINKGO": f"{BIN}/ginkgo"}


def runtime_distributions(root: str = "winsuite") -> list[metadata.Distribution]:
    """`root`'s runtime dependencies, transitively (extras left out), without `root` itself."""
    seen: dict[str, metadata.Distribution] = {}
    pending = [root]
    while pending:
        dist = metadata.distribution(pending.pop())
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue
            name = requirement.name.lower().replace("_", "-")
            if name not in seen:
                seen[name] = metadata.distribution(name)
                pending.append(name)
    return [seen[name] for name in sorted(seen)]


def _files_of(dist: metadata.Distribution) -> Iterator[tuple[str, Path]]:
    """(path under site-packages, file on this machine) of an installed distribution, bytecode left out."""
    for file in dist.files or []:
        relative = str(file)
        if relative.startswith("..") or "__pycache__" in relative or relative.endswith(".pyc"):
            continue
        source = Path(str(dist.locate_file(file)))
        if source.is_file():
            yield relative, source


def _tree(root: Path, left_out: frozenset[str] = frozenset()) -> Iterator[tuple[str, Path]]:
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in left_out and d != "__pycache__")
        for name in sorted(files):
            if not name.endswith(".pyc"):
                yield os.path.relpath(os.path.join(directory, name), root), Path(directory, name)


def winsuite_files() -> Iterator[tuple[str, Path]]:
    """winsuite as a wheel installs it: `winsuite/` (with `data/jobs`, `data/test_images`), `winsuite_reports/`."""
    import winsuite_reports

    for relative, source in _tree(paths.PACKAGE_DIR, frozenset({"data"})):
        yield f"winsuite/{relative}", source
    for relative, source in _tree(Path(winsuite_reports.__file__).parent):
        yield f"winsuite_reports/{relative}", source
    for data in ("jobs", "test_images"):
        for relative, source in _tree(paths.project_root() / data):
            yield f"winsuite/data/{data}/{relative}", source


def _dist_info() -> dict[str, bytes]:
    """winsuite's own dist-info: its version and the pytest11 entry point that loads the plugin."""
    dist = metadata.distribution("winsuite")
    name = f"winsuite-{dist.version}.dist-info"
    return {f"{name}/METADATA": f"Metadata-Version: 2.1\nName: winsuite\nVersion: {dist.version}\n".encode(),
            f"{name}/entry_points.txt": (dist.read_text("entry_points.txt") or "").encode()}


def _inputs(binaries: dict[str, Path]) -> list[tuple[str, Path]]:
    """Every file of the image from this machine, at its path in the image."""
    files = [(f"{SITE}/{r}", s) for dist in runtime_distributions() for r, s in _files_of(dist)]
    files += [(f"{SITE}/{r}", s) for r, s in winsuite_files()]
    files += [(f"{STDLIB}/{r}", s) for r, s in _tree(Path(sysconfig.get_path("stdlib")), _STDLIB_LEFT_OUT)]
    files += [(f"{BIN}/{name}", path) for name, path in sorted(binaries.items())]
    return files


def interpreter() -> Path:
    return Path(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))


def input_key(files: list[tuple[str, Path]]) -> str:
    """What changes the image: each file's place, size and mtime, and the interpreter's."""
    digest = hashlib.sha256(str(interpreter()).encode() + sys.version.encode() + repr(_dist_info()).encode())
    for target, source in files:
        info = source.stat()
        digest.update(f"{target}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:12]


def image_ref(key: str) -> str:
    return f"{REPOSITORY}:{metadata.version('winsuite')}-{key}"


def _stage(files: list[tuple[str, Path]], staging: Path) -> None:
    """Copies under `staging`, compiled to unchecked-hash bytecode (valid whatever the layer's mtimes)."""
    shutil.rmtree(staging, ignore_errors=True)
    for target, source in files:
        dest = staging / target.lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest)
    for relative, data in _dist_info().items():  # the pytest11 entry point loads the plugin in every phase
        dest = staging / SITE.lstrip("/") / relative
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    for top in (SITE, STDLIB):  # ddir: tracebacks name the file where the image has it
        compileall.compile_dir(staging / top.lstrip("/"), ddir=top, quiet=2, workers=1,  # a pool can hang on Ctrl-C
                               invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)


def system_layer() -> Layer:
    """The interpreter, every library it and the extension modules link, a user, /tmp."""
    python = interpreter()
    programs = [python, *sorted(Path(sysconfig.get_path("stdlib"), "lib-dynload").glob("*.so"))]
    libraries = sorted({lib for program in programs for lib in shared_libraries(program)})
    entries = [Entry(PYTHON, source=python), Entry("/usr/bin/python3", 0o777, link=PYTHON)]
    entries += [Entry(str(lib), source=lib) for lib in libraries]
    entries += libpython_links(libraries)
    passwd = f"root:x:0:0:root:/root:/sbin/nologin\nwinsuite:x:{USER_ID}:{USER_ID}:winsuite:/tmp:/sbin/nologin\n"
    entries += [Entry("/etc/passwd", 0o644, data=passwd.encode()),
                Entry("/etc/group", 0o644, data=f"root:x:0:\nwinsuite:x:{USER_ID}:\n".encode()),
                Entry("/tmp", 0o1777), Entry("/results", 0o1777)]
    return Layer("system", tuple(entries))


def libpython_links(libraries: list[Path]) -> list[Entry]:
    """libpython also under the image's prefix: an interpreter that finds it relative to itself ($ORIGIN/../lib, as
    python-build-standalone's do) finds it there; one with an absolute RUNPATH, at its path on this machine."""
    return [Entry(f"{PYTHON_HOME}/lib/{lib.name}", 0o777, link=str(lib))
            for lib in libraries if lib.name.startswith("libpython")]


def _extension_libraries(staging: Path) -> list[Entry]:
    """Libraries the site-packages' extension modules link that the interpreter's layer may lack."""
    found: set[Path] = set()
    for module in (staging / SITE.lstrip("/")).rglob("*.so"):
        found.update(lib for lib in shared_libraries(module) if not str(lib).startswith(str(staging)))
    return [Entry(str(lib), source=lib) for lib in sorted(found)]


def _staged_layer(name: str, staging: Path, prefix: str) -> Layer:
    root = staging / prefix.lstrip("/")
    entries = []
    for directory, subdirs, files in os.walk(root):
        subdirs.sort()
        for file in sorted(files):
            source = Path(directory, file)
            target = "/" + str(source.relative_to(staging))
            entries.append(Entry(target, 0o755 if os.access(source, os.X_OK) else 0o644, source=source))
    return Layer(name, tuple(entries))


def build(binaries: dict[str, Path], report: Callable[[str], None]) -> tuple[str, Path]:
    """The image's reference and its archive (from the cache when its inputs did not change)."""
    files = _inputs(binaries)
    key = input_key(files)
    ref = image_ref(key)
    archive = paths.cache_dir() / "images" / f"winsuite-{key}.tar"
    # Two runs at once (in-cluster runs on two clusters) would share the staging directory: one builds, the other
    # waits and finds the archive.
    with file_lock(archive.parent / ".winsuite-image.lock"):
        if archive.is_file():
            report(f"image {ref}: {archive} (cached)")
            return ref, archive
        staging = paths.cache_dir() / "images" / "winsuite-staging"
        report(f"image {ref}: staging {len(files)} files and compiling their bytecode")
        _stage(files, staging)
        system = system_layer()
        in_system = {entry.path for entry in system.entries}
        libraries = Layer("libraries", tuple(e for e in _extension_libraries(staging) if e.path not in in_system))
        spec = ImageSpec(
            names=(ref,),
            layers=(system, libraries, _staged_layer("stdlib", staging, STDLIB),
                    _staged_layer("binaries", staging, BIN), _staged_layer("site-packages", staging, SITE)),
            entrypoint=(PYTHON, "-m", "winsuite.cli"),
            user=f"{USER_ID}:{USER_ID}",
            labels={"org.opencontainers.image.description": "winsuite, its dependencies, e2e.test, ginkgo and kubectl",
                    "org.opencontainers.image.version": metadata.version("winsuite")},
            env=tuple(f"{k}={v}" for k, v in ENV.items()),
        )
        report(f"image {ref}: writing {archive}")
        write_archive(spec, archive)
        shutil.rmtree(staging, ignore_errors=True)
        for older in archive.parent.glob("winsuite-*.tar"):  # each is hundreds of MB; only the newest is of use
            if older != archive:
                older.unlink(missing_ok=True)
        return ref, archive
