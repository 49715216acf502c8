"""The embedded cluster's images: recipes (test_images/embedded-images.yaml) -> cached OCI archives."""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from winsuite.components.ociimage import Entry
from winsuite.components.ociimage import ImageSpec
from winsuite.components.ociimage import Layer
from winsuite.components.ociimage import inputs_digest
from winsuite.components.ociimage import write_archive
from winsuite.components.progress import Reporter
from winsuite.errors import DataError
from winsuite.inputs.images import ImageCatalog
from winsuite.inputs.images import load_image_catalog
from winsuite.inputs.images import load_repo_list
from winsuite.paths import cache_dir
from winsuite.paths import test_images_dir

ENTRY_KINDS = {"dir": set(), "file": {"host", "built", "text"}, "symlink": {"target"}, "applets": set()}
LOADER = "/lib64/ld-linux-x86-64.so.2"  # the x86-64 dynamic loader, where every x86-64 Linux has it
IMAGE_KEYS = {"layers", "entrypoint", "cmd", "user", "sandbox", "extraNames", "substituteFor", "description"}


def recipes_file() -> Path:
    return test_images_dir() / "embedded-images.yaml"


def repo_list_file() -> Path:
    return test_images_dir() / "repo-lists" / "embedded.yaml"


@dataclasses.dataclass(frozen=True)
class Recipe:
    id: str
    layers: tuple[str, ...]
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    user: str = ""
    sandbox: bool = False
    extra_names: tuple[str, ...] = ()
    substitute_for: str = ""
    description: str = ""


@dataclasses.dataclass(frozen=True)
class Recipes:
    path: Path
    layers: dict[str, list[dict[str, Any]]]
    images: dict[str, Recipe]

    def sandbox(self) -> Recipe:
        return next(recipe for recipe in self.images.values() if recipe.sandbox)


def load_recipes(path: Path | None = None) -> Recipes:
    path = path or recipes_file()
    raw = yaml.safe_load(path.read_text())
    layers = raw.get("layers") or {}
    for name, entries in layers.items():
        for index, entry in enumerate(entries):
            _check_entry(path, f"layers.{name}[{index}]", entry)
    images = {}
    for image_id, spec in (raw.get("images") or {}).items():
        unknown = set(spec) - IMAGE_KEYS
        if unknown:
            raise DataError(
                path, f"images.{image_id}", f"unknown keys {sorted(unknown)}; known: {sorted(IMAGE_KEYS)}"
            )
        missing = [layer for layer in spec["layers"] if layer not in layers]
        if missing:
            raise DataError(
                path, f"images.{image_id}.layers", f"unknown layers {missing}; defined: {sorted(layers)}"
            )
        images[image_id] = Recipe(
            id=image_id,
            layers=tuple(spec["layers"]),
            entrypoint=tuple(spec.get("entrypoint", ())),
            cmd=tuple(spec.get("cmd", ())),
            user=str(spec.get("user", "")),
            sandbox=bool(spec.get("sandbox", False)),
            extra_names=tuple(spec.get("extraNames", ())),
            substitute_for=str(spec.get("substituteFor", "")),
            description=str(spec.get("description", "")),
        )
    if sum(recipe.sandbox for recipe in images.values()) != 1:
        raise DataError(
            path, "images", "exactly one image must be `sandbox: true` (containerd's sandbox image)"
        )
    return Recipes(path, layers, images)


def _check_entry(path: Path, field: str, entry: dict[str, Any]) -> None:
    kinds = [kind for kind in ENTRY_KINDS if kind in entry]
    if len(kinds) != 1:
        raise DataError(path, field, f"an entry has exactly one of {sorted(ENTRY_KINDS)}")
    kind = kinds[0]
    allowed = {kind, "mode"} | ENTRY_KINDS[kind] | ({"libraries"} if kind == "file" else set())
    if set(entry) - allowed:
        raise DataError(
            path,
            field,
            f"unknown keys {sorted(set(entry) - allowed)}; a {kind} entry takes {sorted(allowed)}",
        )
    if kind == "file" and len(set(entry) & ENTRY_KINDS["file"]) != 1:
        raise DataError(path, field, "a file entry has exactly one source: host, built or text")
    if entry.get("libraries") and "host" not in entry:
        raise DataError(path, field, "`libraries: true` needs a `host` file (a dynamically linked program)")


def names(recipe: Recipe, catalog: ImageCatalog) -> tuple[str, ...]:
    """Every name an image is imported under: embedded repo list, upstream defaults, extra names."""
    embedded = load_repo_list(repo_list_file(), catalog)
    candidates = [
        catalog.resolve(recipe.id, embedded),
        catalog.resolve(recipe.id, catalog.default_repo_list()),
        *recipe.extra_names,
    ]
    return tuple(dict.fromkeys(candidates))


def host_files() -> list[Path]:
    """The files of this machine the images are made of (Debian packages the real node's set-up installs)."""
    layers = load_recipes().layers
    return sorted({Path(e["host"]) for entries in layers.values() for e in entries if "host" in e})


def sandbox_image_name() -> str:
    return names(load_recipes().sandbox(), load_image_catalog())[0]


def image_name(image_id: str) -> str:
    """The name the real node has an embedded image under (as the embedded repo list resolves it)."""
    return names(load_recipes().images[image_id], load_image_catalog())[0]


def _applets(busybox: Path) -> list[str]:
    listing = subprocess.run([str(busybox), "--list-full"], capture_output=True, text=True, check=True).stdout
    return [line.strip() for line in listing.splitlines() if line.strip() and line.strip() != "bin/busybox"]


def shared_libraries(program: Path, root: Path | None = None, *more: Path) -> list[Path]:
    """The loader and every library `program` (and `more`) links (ldd), as the paths the loader looks them up by;
    with `root`, programs of that root file system, listed by its own loader there (one process for them all)."""
    programs = [str(path) for path in (program, *more)]
    if root:
        loop = f'for program; do {LOADER} --list "$program"; done'
        argv = ["chroot", str(root), "/bin/sh", "-c", loop, "sh", *programs]
    else:
        argv = ["ldd", *programs]
    listing = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    found = []
    for line in listing.splitlines():
        # "libz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x…)" or "/lib64/ld-linux-x86-64.so.2 (0x…)"; ldd of
        # several programs also prints each program's name ending in ":"
        path = line.split("=>")[-1].strip().split(" (")[0]
        if path.startswith("/") and not path.endswith(":"):
            found.append(Path(path))
    return list(dict.fromkeys(found))


def _entries(raw: list[dict[str, Any]], built: Mapping[str, Path]) -> tuple[Entry, ...]:
    entries: list[Entry] = []
    sources = {entry["file"]: _file_source(entry, built) for entry in raw if "host" in entry or "built" in entry}
    for entry in raw:
        mode = int(str(entry.get("mode", "0755")), 8)
        if "dir" in entry:
            entries.append(Entry(entry["dir"], mode))
        elif "symlink" in entry:
            entries.append(Entry(entry["symlink"], 0o777, link=entry["target"]))
        elif "applets" in entry:
            target = entry["applets"]
            entries += [Entry(f"/{applet}", 0o777, link=target) for applet in _applets(sources[target])]
        elif "text" in entry:
            entries.append(
                Entry(entry["file"], int(str(entry.get("mode", "0644")), 8), data=entry["text"].encode())
            )
        else:
            source = sources[entry["file"]]
            entries.append(Entry(entry["file"], mode, source=source))
            if entry.get("libraries"):
                # At the paths ldd names, with the content of the files they resolve to on this machine.
                entries += [Entry(str(lib), 0o755, source=lib.resolve()) for lib in shared_libraries(source)]
    return tuple(entries)


def _file_source(entry: dict[str, Any], built: Mapping[str, Path]) -> Path:
    """Where a file entry's content is: a file of this machine, or one the build made."""
    return Path(entry["host"]) if "host" in entry else _built_file(built, entry["built"])


def _built_file(built: Mapping[str, Path], reference: str) -> Path:
    """`agnhost` names a built binary; `agnhost-certificates/localhost.crt` a file in a built directory."""
    artifact, _, inner = reference.partition("/")
    return built[artifact] / inner if inner else built[artifact]


def spec(recipe: Recipe, layers: Mapping[str, Layer], catalog: ImageCatalog) -> ImageSpec:
    labels = {"org.opencontainers.image.description": recipe.description}
    if recipe.substitute_for:
        labels["winsuite.io/substitute-for"] = recipe.substitute_for
    return ImageSpec(
        names=names(recipe, catalog),
        layers=tuple(layers[layer] for layer in recipe.layers),
        entrypoint=recipe.entrypoint,
        cmd=recipe.cmd,
        user=recipe.user,
        labels=labels,
    )


def _cache_key(image: ImageSpec) -> str:
    """Inputs that change the archive: the spec, and each host file's identity (path, size, mtime)."""
    entries = [entry for layer in image.layers for entry in layer.entries]
    return inputs_digest(entries, repr(dataclasses.replace(image, layers=())))


def archives(built: Mapping[str, Path], report: Reporter) -> list[Path]:
    """An archive per recipe, reused from the cache while its inputs are unchanged."""
    recipes, catalog = load_recipes(), load_image_catalog()
    # Each layer once (listing busybox's applets and a program's libraries runs a command), shared by images.
    layers = {name: Layer(name, _entries(raw, built)) for name, raw in recipes.layers.items()}
    return [cached_archive(spec(recipe, layers, catalog), recipe.id, cache_dir() / "images", report)
            for recipe in recipes.images.values()]


def cached_archive(image: ImageSpec, name: str, directory: Path, report: Reporter) -> Path:
    """The archive of `image` in `directory`, named after `name` and its inputs: written only when they changed."""
    path = directory / f"{name}-{_cache_key(image)}.tar"
    if not path.exists():
        report(f"  writing image archive {path.name} ({', '.join(image.names)})")
        write_archive(image, path)
    return path
