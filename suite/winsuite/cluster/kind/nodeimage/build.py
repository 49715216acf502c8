"""`winsuite cluster build --kind`: the node image, assembled offline and imported into the container engine.

`kind build node-image` fetches etcd, CoreDNS, pause, kindnetd and local-path images from registries whatever its
mode, so the image is assembled here instead: Debian's root file system (debootstrap), kind's base files, the pinned
binaries winsuite builds, and the images kubeadm starts as archives the node imports at boot. The engine's copy
carries the digest of every input as a label, so an unchanged build is found and a changed one replaces it.
"""

from __future__ import annotations

import fnmatch
import json
import subprocess
import tarfile
import time
from pathlib import Path

from winsuite.cluster.kind.engine import ContainerEngine
from winsuite.cluster.kind.nodeimage import components
from winsuite.cluster.kind.nodeimage import files
from winsuite.cluster.kind.nodeimage import rootfs
from winsuite.components.artifacts import Group
from winsuite.components.artifacts import select
from winsuite.components.build import Builder
from winsuite.components.ociimage import Entry
from winsuite.components.ociimage import add_entries
from winsuite.components.ociimage import inputs_digest
from winsuite.components.progress import Reporter
from winsuite.components.progress import elapsed
from winsuite.errors import UsageError
from winsuite.inputs.pins import Pins

INPUTS_LABEL = "winsuite.io/node-image-inputs"
DNS_TAG_LABEL = "winsuite.io/dns-image-tag"
RECIPE_VERSION = "1"  # bumped when the assembly itself changes in a way the inputs do not show
GROUPS = (Group.CONTROL_PLANE, Group.REAL_NODE, Group.KIND_NODE)
# What kind's base image removes from Debian's systemd (images/base/Dockerfile), under the merged /usr, and what
# the engine provides (/dev, /proc, /sys).
REMOVED = (
    "usr/lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service",
    "usr/lib/systemd/system/multi-user.target.wants/*",
    "etc/systemd/system/*.wants/*",
    "usr/lib/systemd/system/local-fs.target.wants/*",
    "usr/lib/systemd/system/sockets.target.wants/*udev*",
    "usr/lib/systemd/system/sockets.target.wants/*initctl*",
    "usr/lib/systemd/system/basic.target.wants/*",
    "dev/*", "proc/*", "sys/*",
)
CHANGES = ("ENV container=docker", "STOPSIGNAL SIGRTMIN+3", 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]')


def write_tar(root: Path, overlay: list[Entry], out: object) -> None:
    """The node's file system as one tar stream: the root file system less what kind removes and what winsuite
    replaces, then winsuite's files (a path appears once: the engines refuse duplicates)."""
    replaced = {entry.path.strip("/") for entry in overlay if not entry.is_dir}
    directories: set[str] = set()

    def kept(member: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if member.name in replaced or any(fnmatch.fnmatchcase(member.name, pattern) for pattern in REMOVED):
            return None
        if member.isdir():
            directories.add(member.name)
        return member

    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:  # type: ignore[call-overload]
        for child in sorted(root.iterdir()):
            tar.add(child, arcname=child.name, filter=kept)
        add_entries(tar, overlay, present=directories)


def image_labels(engine: ContainerEngine, reference: str) -> dict[str, str] | None:
    """The labels of the engine's image `reference` (None when the engine has no such image)."""
    done = engine.run(["image", "inspect", "--format", "{{json .Config.Labels}}", reference], check=False)
    if done.returncode != 0:
        return None
    labels = json.loads(done.stdout or b"null")
    return {str(k): str(v) for k, v in (labels or {}).items()}


def _import(engine: ContainerEngine, root: Path, overlay: list[Entry], reference: str, labels: dict[str, str],
            report: Reporter) -> None:
    changes = [*CHANGES, *(f"LABEL {key}={value}" for key, value in labels.items())]
    argv = [engine.executable, "import", *(arg for change in changes for arg in ("--change", change)), "-", reference]
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=engine.env()) as proc:
        assert proc.stdin is not None and proc.stderr is not None
        try:
            write_tar(root, overlay, proc.stdin)
        finally:
            proc.stdin.close()
        error = proc.stderr.read().decode(errors="replace").strip().splitlines()
        if proc.wait() != 0:
            raise UsageError(f"`{engine.name} import` of the node image failed: {error[-1] if error else 'no message'}")
    report(f"  imported {reference} into {engine.name}")


def ensure(pins: Pins, engine: ContainerEngine, report: Reporter, bin_dir: Path | None = None) -> str:
    """The pinned node image in the engine: found by its inputs, else built (what is missing) and imported."""
    started = time.monotonic()
    bins = Builder(pins, report, bin_dir).ensure(select(pins, GROUPS))
    root = rootfs.ensure(pins.node_debian, report)
    wanted = components.components(components.wanted_images(bins["kubeadm"], pins.kubernetes), pins)
    specs = [components.spec(component, bins, root) for component in wanted]
    archives = dict(zip(wanted, components.archives(specs, report), strict=True))
    overlay = files.entries(pins.kubernetes, bins, archives)
    key = inputs_digest(overlay, repr((root.name, RECIPE_VERSION)))
    reference = pins.kind_node_image
    found = image_labels(engine, reference)
    if found is not None and found.get(INPUTS_LABEL) == key:
        report(f"kind node image {reference} is up to date ({engine.name}, inputs {key})")
        return reference
    dns = next(component.tag for component in wanted if component.name == "coredns")
    report(f"assembling kind node image {reference} (inputs {key}) into {engine.name} …")
    _import(engine, root, overlay, reference, {INPUTS_LABEL: key, DNS_TAG_LABEL: dns}, report)
    report(f"kind node image {reference} built in {elapsed(time.monotonic() - started)}")
    return reference
