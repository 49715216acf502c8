"""The e2e image catalog (test_images/catalog.yaml) and repo lists (KUBE_TEST_REPO_LIST) -> image references."""

from __future__ import annotations

import dataclasses
import functools
import re
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from winsuite import messages
from winsuite.authoring.targeting import NodeOS
from winsuite.errors import DataError
from winsuite.errors import UsageError
from winsuite.errors import shown
from winsuite.inputs import strict_yaml
from winsuite.paths import test_images_dir


class ImageUnavailable(UsageError):
    """The catalog has no variant of an image for the target OS or Windows version."""


@dataclasses.dataclass(frozen=True)
class WindowsVersion:
    name: str  # ltsc2022
    build: str  # 10.0.20348, the node.kubernetes.io/windows-build label value
    image_tag: str  # ltsc2022 (1809 for ltsc2019), how image builds name it


@dataclasses.dataclass(frozen=True)
class Image:
    id: str
    os: tuple[str, ...]
    windows: tuple[str, ...] = ()
    upstream_id: str | None = None
    registry_key: str | None = None
    name: str = ""
    version: str = ""
    reference: str | None = None  # a fixed reference no repo-list key remaps


@dataclasses.dataclass(frozen=True)
class RepoList:
    """Effective registry per key, after defaults, the file's keys and legacy aliases."""

    source: str
    registries: dict[str, str]
    warnings: tuple[str, ...] = ()
    text: str = ""  # the file as read: what e2e.test is handed (KUBE_TEST_REPO_LIST), so it reads no other


@dataclasses.dataclass(frozen=True)
class ImageCatalog:
    source: Path
    images: dict[str, Image]
    default_registries: dict[str, str]
    legacy_registries: dict[str, str | None]
    windows_versions: dict[str, WindowsVersion]

    def default_repo_list(self) -> RepoList:
        return RepoList("defaults", dict(self.default_registries))

    def image(self, image_id: str) -> Image:
        try:
            return self.images[image_id]
        except KeyError:
            raise UsageError(
                f"unknown image {image_id!r}; the catalog ({self.source}) has: {', '.join(sorted(self.images))}"
            ) from None

    def windows_builds(self) -> list[str]:
        """The Windows builds the catalog has images for (10.0.17763, …)."""
        return [v.build for v in self.windows_versions.values()]

    def windows_version(self, build: str) -> WindowsVersion:
        """The Windows version whose build the node label `node.kubernetes.io/windows-build` names."""
        for version in self.windows_versions.values():
            if build == version.build or build.startswith(version.build + "."):
                return version
        known = ", ".join(f"{v.build} ({v.name})" for v in self.windows_versions.values())
        raise ImageUnavailable(f"unknown Windows build {build!r}; known builds: {known}")

    def resolve(
        self,
        image_id: str,
        repo_list: RepoList | None = None,
        *,
        target_os: str = "linux",
        windows_build: str | None = None,
    ) -> str:
        """The image reference for a pod on `target_os` (and, on Windows, the node's build)."""
        image = self.image(image_id)
        if target_os not in image.os:
            raise ImageUnavailable(f"image {image_id!r} is not published for {target_os} (only {', '.join(image.os)})")
        if target_os == NodeOS.WINDOWS and windows_build is not None:
            version = self.windows_version(windows_build)
            if version.name not in image.windows:
                raise ImageUnavailable(
                    f"image {image_id!r} has no Windows {version.name} ({version.build}) variant "
                    f"(published for: {', '.join(image.windows) or 'none'})"
                )
        if image.reference is not None:
            return image.reference
        registries = (repo_list or self.default_repo_list()).registries
        assert image.registry_key is not None  # guaranteed by _image_from_yaml
        return f"{registries[image.registry_key]}/{image.name}:{image.version}"


def _require(raw: Any, path: Path, field: str, kind: type) -> Any:
    if not isinstance(raw, kind):
        raise DataError(path, field, f"expected a {kind.__name__}, got {type(raw).__name__}")
    return raw


def _image_from_yaml(image_id: str, raw: Any, path: Path, registries: dict[str, str]) -> Image:
    field = f"images.{image_id}"
    raw = _require(raw, path, field, dict)
    oses = tuple(_require(raw.get("os"), path, f"{field}.os", list))
    if not oses or not set(oses) <= set(NodeOS):
        raise DataError(path, f"{field}.os", f"expected a list of {', '.join(NodeOS)}")
    windows = tuple(str(w) for w in raw.get("windows", ()))
    if "reference" in raw:
        return Image(id=image_id, os=oses, windows=windows, reference=str(raw["reference"]))
    key = raw.get("registry")
    if key not in registries:
        raise DataError(path, f"{field}.registry", f"unknown registry key {shown(key)}; known: {', '.join(registries)}")
    for required in ("name", "version"):
        if required not in raw:
            raise DataError(path, f"{field}.{required}", "required")
    return Image(
        id=image_id, os=oses, windows=windows,
        upstream_id=raw.get("upstreamId"),
        registry_key=key,
        name=str(raw["name"]),
        version=str(raw["version"]),
    )


@functools.cache
def load_image_catalog(path: Path | None = None) -> ImageCatalog:
    path = path or test_images_dir() / "catalog.yaml"
    raw = _require(strict_yaml.read(path, "image catalog"), path, "", dict)
    registries = {str(k): str(v) for k, v in _require(raw.get("registries"), path, "registries", dict).items()}
    versions = {}
    for name, version in _require(raw.get("windowsVersions"), path, "windowsVersions", dict).items():
        fields = _require(version, path, f"windowsVersions.{name}", dict)
        missing = [k for k in ("build", "imageTag") if k not in fields]
        if missing:
            raise DataError(path, f"windowsVersions.{name}.{missing[0]}", "required")
        versions[name] = WindowsVersion(name, str(fields["build"]), str(fields["imageTag"]))
    images = {
        str(image_id): _image_from_yaml(str(image_id), spec, path, registries)
        for image_id, spec in _require(raw.get("images"), path, "images", dict).items()
    }
    for image in images.values():
        unknown = set(image.windows) - set(versions)
        if unknown:
            raise DataError(path, f"images.{image.id}.windows", f"unknown Windows versions {sorted(unknown)}")
    legacy = {str(k): (None if v is None else str(v)) for k, v in (raw.get("legacyRegistries") or {}).items()}
    return ImageCatalog(path, images, registries, legacy, versions)


_REGISTRY = re.compile(r"[^\s\x00-\x1f\x7f]+")  # a registry (host[:port][/path]) has no blanks or controls


def _read_repo_list_text(source: str) -> str:
    if source.startswith(("http://", "https://")):  # upstream accepts a URL too
        try:
            with urllib.request.urlopen(source, timeout=30) as response:
                return str(response.read(strict_yaml.MAX_BYTES).decode("utf-8", errors="replace"))
        except (OSError, ValueError) as err:
            raise UsageError(f"cannot read repo list (KUBE_TEST_REPO_LIST) {source}: {err}") from err
    return strict_yaml.read_text(Path(source), "repo list (KUBE_TEST_REPO_LIST)")


def load_repo_list(source: str | Path, catalog: ImageCatalog | None = None) -> RepoList:
    """Read a KUBE_TEST_REPO_LIST file (either key generation) over the catalog's default registries."""
    catalog = catalog or load_image_catalog()
    source = str(source)
    text = _read_repo_list_text(source)
    raw = strict_yaml.parse(text, source)
    if raw is None:  # an empty file changes nothing, as upstream reads it
        raw = {}
    if not isinstance(raw, dict):
        raise DataError(source, "", "a repo list is a mapping of registry keys to registries")
    for key, value in raw.items():
        if not isinstance(key, str):
            raise DataError(source, str(key), "a registry key is a name such as promoterE2eRegistry")
        if not isinstance(value, str) or not _REGISTRY.fullmatch(value):
            raise DataError(source, key, "expected a registry such as registry.k8s.io/e2e-test-images")
    registries = dict(catalog.default_registries)
    registries.update({k: v for k, v in raw.items() if k in registries})
    warnings = list(_legacy_keys(raw, registries, catalog, source))
    unknown = sorted(k for k in raw if k not in registries and k not in catalog.legacy_registries)
    if unknown:
        warnings.append(messages.unknown_repo_list_keys(source, unknown, list(registries)))
    return RepoList(source, registries, tuple(warnings), text)


def _legacy_keys(raw: dict[str, str], registries: dict[str, str], catalog: ImageCatalog, source: str) -> Iterable[str]:
    """Apply older-generation keys where the current key is not set; say which ones have no effect."""
    unused = []
    for key, current in catalog.legacy_registries.items():
        if key not in raw:
            continue
        if current is None:
            unused.append(key)
        elif current not in raw:
            registries[current] = raw[key]
    if unused:
        yield messages.unused_legacy_repo_list_keys(source, unused)
