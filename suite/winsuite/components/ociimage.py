"""OCI image archives (oci-layout tar) written from files, for `ctr images import` with no registry."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import json
import os
import tarfile
import tempfile
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Iterable
from pathlib import Path
from typing import IO
from typing import Any

MANIFEST = "application/vnd.oci.image.manifest.v1+json"
CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER = "application/vnd.oci.image.layer.v1.tar"  # uncompressed: made and imported locally, never pulled
INDEX = "application/vnd.oci.image.index.v1+json"
NAME_ANNOTATION = "io.containerd.image.name"
REF_ANNOTATION = "org.opencontainers.image.ref.name"
EPOCH = "1970-01-01T00:00:00Z"  # fixed timestamps: the same inputs give the same digests
DEFAULT_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclasses.dataclass(frozen=True)
class Entry:
    """One file-system entry of a layer: a directory, a file (from the host or inline) or a symlink."""

    path: str  # absolute path inside the image
    mode: int = 0o755
    source: Path | None = None
    data: bytes | None = None
    link: str | None = None

    @property
    def is_dir(self) -> bool:
        return self.source is None and self.data is None and self.link is None


@dataclasses.dataclass(frozen=True)
class Layer:
    name: str
    entries: tuple[Entry, ...]


@dataclasses.dataclass(frozen=True)
class ImageSpec:
    names: tuple[str, ...]
    layers: tuple[Layer, ...]
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    user: str = ""
    labels: dict[str, str] = dataclasses.field(default_factory=dict)
    env: tuple[str, ...] = ()  # NAME=value, after PATH


@dataclasses.dataclass(frozen=True)
class Blob:
    digest: str  # sha256:<hex>
    size: int
    path: Path


def _with_parents(entries: Iterable[Entry]) -> list[Entry]:
    """Entries sorted by path, with a directory entry for every parent the list leaves implicit."""
    by_path = {entry.path.strip("/"): entry for entry in entries}
    for path in list(by_path):
        parent = os.path.dirname(path)
        while parent and parent not in by_path:
            by_path[parent] = Entry("/" + parent)
            parent = os.path.dirname(parent)
    return [by_path[path] for path in sorted(by_path)]


def _tar_info(entry: Entry, name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mode, info.mtime, info.uid, info.gid, info.uname, info.gname = entry.mode, 0, 0, 0, "root", "root"
    return info


def add_entries(tar: tarfile.TarFile, entries: Iterable[Entry], present: Collection[str] = ()) -> None:
    """Add entries (and their implicit parent directories) in path order, owner root, mtime 0; directories in
    `present` (paths without the leading /) are already in the tar and are not written twice."""
    for entry in _with_parents(entries):
        name = entry.path.strip("/")
        if entry.is_dir and name in present:
            continue
        info = _tar_info(entry, name)
        if entry.link is not None:
            info.type, info.linkname = tarfile.SYMTYPE, entry.link
            tar.addfile(info)
        elif entry.is_dir:
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
        elif entry.data is not None:
            info.size = len(entry.data)
            tar.addfile(info, io.BytesIO(entry.data))
        elif entry.source is not None:
            info.size = entry.source.stat().st_size
            with entry.source.open("rb") as source:
                tar.addfile(info, source)


def write_layer(layer: Layer, out: IO[bytes]) -> None:
    """A deterministic layer tar: sorted entries, owner root, mtime 0."""
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        add_entries(tar, layer.entries)


def inputs_digest(entries: Iterable[Entry], seed: str = "") -> str:
    """What changes a file made of `entries` (and `seed`): each entry, a host file by its identity (path, size,
    mtime)."""
    digest = hashlib.sha256(seed.encode())
    for entry in entries:
        stat = entry.source.stat() if entry.source else None
        identity = (
            entry.path,
            entry.mode,
            entry.link,
            entry.data,
            stat and (str(entry.source), stat.st_size, stat.st_mtime_ns),
        )
        digest.update(json.dumps(identity, default=str).encode())
    return digest.hexdigest()[:16]


def _blob(directory: Path, write: Callable[[IO[bytes]], object]) -> Blob:
    """Write a blob through `write(handle)` into directory, named by its sha256."""
    with tempfile.NamedTemporaryFile(dir=directory, delete=False) as handle:
        write(handle)
    data_path = Path(handle.name)
    digest = hashlib.sha256()
    with data_path.open("rb") as read:
        for chunk in iter(lambda: read.read(1 << 20), b""):
            digest.update(chunk)
    final = directory / digest.hexdigest()
    os.replace(data_path, final)
    return Blob(f"sha256:{digest.hexdigest()}", final.stat().st_size, final)


def _json_blob(directory: Path, doc: dict[str, Any]) -> Blob:
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    return _blob(directory, lambda handle: handle.write(raw))


def _descriptor(media_type: str, blob: Blob, **extra: Any) -> dict[str, Any]:
    return {"mediaType": media_type, "digest": blob.digest, "size": blob.size, **extra}


def config_doc(spec: ImageSpec, diff_ids: list[str]) -> dict[str, Any]:
    config: dict[str, Any] = {"Env": [DEFAULT_PATH, *spec.env], "WorkingDir": "/", "Labels": dict(spec.labels)}
    if spec.entrypoint:
        config["Entrypoint"] = list(spec.entrypoint)
    if spec.cmd:
        config["Cmd"] = list(spec.cmd)
    if spec.user:
        config["User"] = spec.user
    return {
        "created": EPOCH,
        "architecture": "amd64",
        "os": "linux",
        "config": config,
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "history": [
            {"created": EPOCH, "created_by": f"winsuite layer {layer.name}"} for layer in spec.layers
        ],
    }


def index_doc(spec: ImageSpec, manifest: Blob) -> dict[str, Any]:
    """One descriptor per name, all for the same manifest: `ctr images import` creates each name."""
    platform = {"architecture": "amd64", "os": "linux"}
    return {
        "schemaVersion": 2,
        "mediaType": INDEX,
        "manifests": [
            _descriptor(
                MANIFEST,
                manifest,
                platform=platform,
                annotations={NAME_ANNOTATION: name, REF_ANNOTATION: name.rsplit(":", 1)[-1]},
            )
            for name in spec.names
        ],
    }


def write_archive(spec: ImageSpec, dest: Path) -> None:
    """Write the oci-layout tar for `spec` to dest (atomically: a partial archive never has dest's name)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as scratch:
        blobs = Path(scratch) / "blobs" / "sha256"
        blobs.mkdir(parents=True)
        layers = [_blob(blobs, functools.partial(write_layer, layer)) for layer in spec.layers]
        config = _json_blob(blobs, config_doc(spec, [layer.digest for layer in layers]))
        manifest = _json_blob(
            blobs,
            {
                "schemaVersion": 2,
                "mediaType": MANIFEST,
                "config": _descriptor(CONFIG, config),
                "layers": [_descriptor(LAYER, layer) for layer in layers],
            },
        )
        (Path(scratch) / "index.json").write_text(json.dumps(index_doc(spec, manifest), sort_keys=True))
        (Path(scratch) / "oci-layout").write_text(json.dumps({"imageLayoutVersion": "1.0.0"}))
        partial = Path(scratch) / "archive.tar"
        with tarfile.open(partial, "w") as tar:
            for name in ("oci-layout", "index.json"):
                tar.add(Path(scratch) / name, arcname=name)
            for blob in sorted({blob.path for blob in [*layers, config, manifest]}):
                tar.add(blob, arcname=f"blobs/sha256/{blob.name}")
        os.replace(partial, dest)
