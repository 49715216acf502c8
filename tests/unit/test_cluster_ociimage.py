"""OCI image archives: the layout `ctr images import` reads, content-addressed and reproducible."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

from winsuite.components.ociimage import Entry
from winsuite.components.ociimage import ImageSpec
from winsuite.components.ociimage import Layer
from winsuite.components.ociimage import write_archive
from winsuite.components.ociimage import write_layer


def spec(binary: Path) -> ImageSpec:
    layer = Layer(
        "tool",
        (
            Entry("/usr/local/bin/tool", 0o755, source=binary),
            Entry("/etc/motd", 0o644, data=b"hello\n"),
            Entry("/bin/alias", 0o777, link="/usr/local/bin/tool"),
            Entry("/tmp", 0o1777),
        ),
    )
    return ImageSpec(
        names=("winsuite.local/tool:1.0", "registry.k8s.io/tool:1.0"),
        layers=(layer,),
        entrypoint=("/usr/local/bin/tool",),
        cmd=("serve",),
        user="1234",
    )


def members(archive: Path) -> dict[str, bytes]:
    files = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            handle = tar.extractfile(member)
            if handle is not None:
                files[member.name] = handle.read()
    return files


def test_archive_has_an_oci_layout_index_naming_every_name(tmp_path: Path) -> None:
    binary = tmp_path / "tool"
    binary.write_bytes(b"\x7fELF fake")
    write_archive(spec(binary), tmp_path / "tool.tar")

    files = members(tmp_path / "tool.tar")
    index = json.loads(files["index.json"])

    assert json.loads(files["oci-layout"]) == {"imageLayoutVersion": "1.0.0"}
    names = [d["annotations"]["io.containerd.image.name"] for d in index["manifests"]]
    assert names == ["winsuite.local/tool:1.0", "registry.k8s.io/tool:1.0"]
    assert len({d["digest"] for d in index["manifests"]}) == 1


def test_every_blob_is_named_by_its_digest_and_the_config_describes_the_image(tmp_path: Path) -> None:
    binary = tmp_path / "tool"
    binary.write_bytes(b"\x7fELF fake")
    write_archive(spec(binary), tmp_path / "tool.tar")
    files = members(tmp_path / "tool.tar")

    for name, data in files.items():
        if name.startswith("blobs/sha256/"):
            assert name.rsplit("/", 1)[1] == hashlib.sha256(data).hexdigest()
    manifest_digest = json.loads(files["index.json"])["manifests"][0]["digest"].split(":")[1]
    manifest = json.loads(files[f"blobs/sha256/{manifest_digest}"])
    config = json.loads(files[f"blobs/sha256/{manifest['config']['digest'].split(':')[1]}"])
    assert config["config"]["Entrypoint"] == ["/usr/local/bin/tool"]
    assert config["config"]["Cmd"] == ["serve"]
    assert config["config"]["User"] == "1234"
    assert config["rootfs"]["diff_ids"] == [layer["digest"] for layer in manifest["layers"]]


def test_layers_are_reproducible_and_list_parent_directories(tmp_path: Path) -> None:
    binary = tmp_path / "tool"
    binary.write_bytes(b"\x7fELF fake")
    first, second = io.BytesIO(), io.BytesIO()
    write_layer(spec(binary).layers[0], first)
    write_layer(spec(binary).layers[0], second)

    assert first.getvalue() == second.getvalue()
    first.seek(0)
    with tarfile.open(fileobj=first) as tar:
        entries = {m.name: m for m in tar.getmembers()}
    assert list(entries) == sorted(entries)
    assert {"usr", "usr/local", "usr/local/bin", "bin", "etc"} <= set(entries)
    assert entries["bin/alias"].issym() and entries["bin/alias"].linkname == "/usr/local/bin/tool"
    assert entries["tmp"].mode == 0o1777
    assert all(m.uid == 0 and m.mtime == 0 for m in entries.values())
