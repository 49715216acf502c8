"""The images kubeadm starts (control plane, kube-proxy, etcd, CoreDNS, pause), written from winsuite's own builds.

Which images, and under which names, is asked of the built kubeadm itself (`kubeadm config images list`), so the node
carries exactly what `kubeadm init` will look for. Each is one layer holding the binary; kube-proxy's also holds
iptables and the libraries it links, taken from the node's root file system.
"""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Mapping
from pathlib import Path

from winsuite.cluster.kind.paths import kind_dir
from winsuite.components.images import cached_archive
from winsuite.components.images import shared_libraries
from winsuite.components.ociimage import Entry
from winsuite.components.ociimage import ImageSpec
from winsuite.components.ociimage import Layer
from winsuite.components.progress import Reporter
from winsuite.errors import UsageError
from winsuite.inputs.pins import Pins

CONTROL_PLANE = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
# kube-proxy's iptables, from the node's root file system: the legacy backend, which kind's entrypoint selects for
# the node (and kubelet's hint chains) in a fresh network namespace; its extensions are loaded at run time.
XTABLES = "/usr/sbin/xtables-legacy-multi"
XTABLES_COMMANDS = ("iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore")
XTABLES_EXTENSIONS = "usr/lib/x86_64-linux-gnu/xtables"


@dataclasses.dataclass(frozen=True)
class Component:
    repository: str  # e.g. registry.k8s.io/etcd
    wanted_tag: str  # the tag kubeadm asks for
    tag: str  # the tag the image gets: the version of what it holds

    @property
    def name(self) -> str:
        return self.repository.rsplit("/", 1)[-1]

    @property
    def reference(self) -> str:
        return f"{self.repository}:{self.tag}"


def wanted_images(kubeadm: Path, kubernetes: str) -> list[str]:
    done = subprocess.run([str(kubeadm), "config", "images", "list", "--kubernetes-version", kubernetes],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise UsageError(f"`kubeadm config images list` failed: {done.stderr.strip()}")
    return done.stdout.split()


def components(wanted: list[str], pins: Pins) -> list[Component]:
    """Each image kubeadm wants, tagged with the version winsuite builds of it.

    etcd and pause must be the versions kubeadm wants (kubeadm checks etcd's; the sandbox image is named in
    containerd's configuration); CoreDNS is the pinned one, and the kind configuration tells kubeadm its tag.
    """
    found = []
    for image in wanted:
        repository, wanted_tag = image.rsplit(":", 1)
        name = repository.rsplit("/", 1)[-1]
        tag = pins.coredns if name == "coredns" else wanted_tag
        if name == "etcd" and wanted_tag.split("-")[0] != pins.etcd.lstrip("v"):
            raise UsageError(f"kubeadm {pins.kubernetes} wants etcd {wanted_tag}; "
                             f"suite/winsuite/pins.yaml pins {pins.etcd}")
        found.append(Component(repository, wanted_tag, tag))
    return found


def _resolved_in(root: Path, paths: list[Path]) -> list[Path]:
    """The files `paths` name inside the root file system, symlinks followed there (not on this machine)."""
    done = subprocess.run(["chroot", str(root), "realpath", "-e", *map(str, paths)], capture_output=True, text=True,
                          check=True)
    return [root / line.lstrip("/") for line in done.stdout.splitlines()]


def _iptables(root: Path) -> list[Entry]:
    """iptables (legacy) with its extensions and every library they link, at the paths the loader looks them up by."""
    extensions = sorted((root / XTABLES_EXTENSIONS).glob("*.so"))
    inside = [Path("/") / path.relative_to(root) for path in extensions]
    libraries = shared_libraries(Path(XTABLES), root, *inside)
    wanted = [Path(XTABLES), *inside, *libraries]
    entries = [Entry(str(path), 0o755, source=source) for path, source in zip(wanted, _resolved_in(root, wanted),
                                                                             strict=True)]
    return entries + [Entry(f"/usr/sbin/{name}", 0o777, link="xtables-legacy-multi") for name in XTABLES_COMMANDS]


def _files(component: Component, bins: Mapping[str, Path], rootfs: Path) -> tuple[tuple[Entry, ...], tuple[str, ...]]:
    """The image's files and its entrypoint."""
    if component.name in (*CONTROL_PLANE, "kube-proxy", "etcd"):
        binary = Entry(f"/usr/local/bin/{component.name}", 0o755, source=bins[component.name])
        extra = _iptables(rootfs) if component.name == "kube-proxy" else []
        return (binary, *extra, Entry("/tmp", 0o1777)), ()
    if component.name in ("coredns", "pause"):
        return (Entry(f"/{component.name}", 0o755, source=bins[component.name]),), (f"/{component.name}",)
    raise UsageError(f"kubeadm wants image {component.reference}, which winsuite cannot make from its builds")


def spec(component: Component, bins: Mapping[str, Path], rootfs: Path) -> ImageSpec:
    entries, entrypoint = _files(component, bins, rootfs)
    return ImageSpec(names=(component.reference,), layers=(Layer(component.name, entries),), entrypoint=entrypoint,
                     labels={"org.opencontainers.image.description": f"{component.name} built by winsuite"})


def archives(specs: list[ImageSpec], report: Reporter) -> list[Path]:
    """An OCI archive per image, reused while its inputs are unchanged."""
    return [cached_archive(image, image.layers[0].name, kind_dir() / "images", report) for image in specs]
