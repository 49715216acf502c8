"""Everything the embedded cluster and the kind node image run, where each comes from, and where a built copy is."""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from winsuite.given_paths import Found
from winsuite.given_paths import probe
from winsuite.inputs.pins import Pins
from winsuite.paths import cache_dir

BIN_DIR_ENV = "WINSUITE_BIN_DIR"
OWN_GO_DIR = Path(__file__).resolve().parent  # winsuite's own Go programs: one directory each, beside this file
SERVICELB = "servicelb"


class Group(enum.Enum):
    """Which cluster feature needs an artifact (what `cluster build` builds by default)."""

    CONTROL_PLANE = "control-plane"
    REAL_NODE = "real-node"
    E2E = "e2e"
    KIND_NODE = "kind-node"  # the kind CLI and what a kind node image carries besides the real node's binaries
    TEST_TOOLS = "test-tools"  # what winsuite's own tests make clusters it did not make with (kwokctl)


class Recipe(enum.Enum):
    GO_BUILD = "go build in a wrapper module"
    GO_TEST = "go test -c in a wrapper module"
    GO_INSTALL = "go install module@version"
    GO_BUILD_OWN = "go build of winsuite's own Go program against the pinned Kubernetes modules"
    MODULE_FILES = "files copied from the module"
    C_STATIC = "gcc -static of a C file in the module"
    BUSYBOX = "busybox's source tarball (Debian's mirror) built static with its default configuration"


@dataclasses.dataclass(frozen=True)
class Source:
    """A Go module (or another source) at a pinned version; its artifacts share one cache directory."""

    key: str
    module: str
    version: str

    @property
    def cache_name(self) -> str:
        return f"{self.key}-{self.version}"


@dataclasses.dataclass(frozen=True)
class Artifact:
    name: str  # the file (or directory) name in a bin directory
    group: Group
    source: Source
    recipe: Recipe
    target: str  # Go package path, or a path inside the module
    version_variable: str = ""  # a Go string variable -X sets to the source's version (what `--version` prints)
    build_tags: tuple[str, ...] = ()


def own_source_digest(program: str) -> str:
    """The content of one of winsuite's own Go programs, as 12 hex digits: a change of it is a new build."""
    digest = hashlib.sha256()
    for path in sorted((OWN_GO_DIR / program).glob("*.go")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def sources(pins: Pins) -> dict[str, Source]:
    return {
        "kubernetes": Source("kubernetes", "k8s.io/kubernetes", pins.kubernetes),
        "etcd": Source("etcd", "go.etcd.io/etcd/server/v3", pins.etcd),
        "kwok": Source("kwok", "sigs.k8s.io/kwok", pins.kwok),
        "coredns": Source("coredns", "github.com/coredns/coredns", pins.coredns),
        "metrics-server": Source("metrics-server", "sigs.k8s.io/metrics-server", pins.metrics_server),
        # winsuite's own program, keyed by the pinned Kubernetes and its source's content.
        "winsuite-servicelb": Source("winsuite-servicelb", "k8s.io/kubernetes",
                                     f"{pins.kubernetes}-{own_source_digest(SERVICELB)}"),
        "kind": Source("kind", "sigs.k8s.io/kind", pins.kind),
        "containerd": Source("containerd", "github.com/containerd/containerd/v2", pins.containerd),
        "crictl": Source("crictl", "sigs.k8s.io/cri-tools", pins.crictl),
        "cni-plugins": Source("cni-plugins", "github.com/containernetworking/plugins", pins.cni_plugins),
        "busybox": Source("busybox", "busybox", pins.busybox),  # its source tarball, from Debian's mirror
    }


# The node's containerd as kind's base image builds it (its Makefile's default tags, static).
CONTAINERD_TAGS = ("no_aufs", "no_zfs", "no_btrfs", "no_devmapper")
CNI_PLUGINS = {"host-local": "ipam/host-local", "loopback": "main/loopback", "ptp": "main/ptp",
               "portmap": "meta/portmap"}


def _kind_node(src: dict[str, Source]) -> tuple[Artifact, ...]:
    kind, containerd, node = src["kind"], src["containerd"], Group.KIND_NODE
    containerd_version = "github.com/containerd/containerd/v2/version.Version"
    return (
        Artifact("kind", node, kind, Recipe.GO_INSTALL, "sigs.k8s.io/kind"),
        # kind's entrypoint, systemd units and containerd configuration (images/base/files of the kind module).
        Artifact("kind-base-files", node, kind, Recipe.MODULE_FILES, "images/base/files"),
        Artifact("kubeadm", node, src["kubernetes"], Recipe.GO_BUILD, "k8s.io/kubernetes/cmd/kubeadm"),
        *(Artifact(name, node, containerd, Recipe.GO_INSTALL, f"github.com/containerd/containerd/v2/cmd/{name}",
                   containerd_version, CONTAINERD_TAGS)
          for name in ("containerd", "ctr", "containerd-shim-runc-v2")),
        Artifact("crictl", node, src["crictl"], Recipe.GO_INSTALL, "sigs.k8s.io/cri-tools/cmd/crictl",
                 "sigs.k8s.io/cri-tools/pkg/version.Version"),
        *(Artifact(name, node, src["cni-plugins"], Recipe.GO_INSTALL,
                   f"github.com/containernetworking/plugins/plugins/{package}")
          for name, package in CNI_PLUGINS.items()),
    )


def catalog(pins: Pins) -> tuple[Artifact, ...]:
    src = sources(pins)
    k8s, cp, node = src["kubernetes"], Group.CONTROL_PLANE, Group.REAL_NODE
    return (
        Artifact("etcd", cp, src["etcd"], Recipe.GO_BUILD, "go.etcd.io/etcd/server/v3"),
        Artifact("kube-apiserver", cp, k8s, Recipe.GO_BUILD, "k8s.io/kubernetes/cmd/kube-apiserver"),
        Artifact(
            "kube-controller-manager",
            cp,
            k8s,
            Recipe.GO_BUILD,
            "k8s.io/kubernetes/cmd/kube-controller-manager",
        ),
        Artifact("kube-scheduler", cp, k8s, Recipe.GO_BUILD, "k8s.io/kubernetes/cmd/kube-scheduler"),
        Artifact("kubectl", cp, k8s, Recipe.GO_BUILD, "k8s.io/kubernetes/cmd/kubectl"),
        Artifact("kwok", cp, src["kwok"], Recipe.GO_INSTALL, "sigs.k8s.io/kwok/cmd/kwok"),
        # kwok >= 0.8 has no built-in stages; the module ships them as kustomize directories.
        Artifact("kwok-stages", cp, src["kwok"], Recipe.MODULE_FILES, "kustomize/stage"),
        Artifact("kubelet", node, k8s, Recipe.GO_BUILD, "k8s.io/kubernetes/cmd/kubelet"),
        Artifact("kube-proxy", node, k8s, Recipe.GO_BUILD, "k8s.io/kubernetes/cmd/kube-proxy"),
        Artifact("agnhost", node, k8s, Recipe.GO_BUILD, "k8s.io/kubernetes/test/images/agnhost"),
        # The certificates upstream's agnhost image carries at /localhost.crt and /localhost.key.
        Artifact("agnhost-certificates", node, k8s, Recipe.MODULE_FILES, "test/images/agnhost/porter"),
        Artifact("pause", node, k8s, Recipe.C_STATIC, "build/pause/linux/pause.c"),
        Artifact("busybox", node, src["busybox"], Recipe.BUSYBOX, "busybox"),
        # Upstream's resource-consumer image (the HPA tests' load): its server and the CPU burner it runs.
        Artifact("resource-consumer", node, k8s, Recipe.GO_BUILD, "k8s.io/kubernetes/test/images/resource-consumer"),
        Artifact("consume-cpu", node, k8s, Recipe.GO_BUILD,
                 "k8s.io/kubernetes/test/images/resource-consumer/consume-cpu"),
        Artifact("coredns", node, src["coredns"], Recipe.GO_BUILD, "github.com/coredns/coredns"),
        Artifact("metrics-server", node, src["metrics-server"], Recipe.GO_INSTALL,
                 "sigs.k8s.io/metrics-server/cmd/metrics-server"),
        Artifact("winsuite-servicelb", node, src["winsuite-servicelb"], Recipe.GO_BUILD_OWN, SERVICELB),
        Artifact("e2e.test", Group.E2E, k8s, Recipe.GO_TEST, "k8s.io/kubernetes/test/e2e"),
        # kwok's own cluster tool (the same module and version as kwok): the tests' cluster of a user's making.
        Artifact("kwokctl", Group.TEST_TOOLS, src["kwok"], Recipe.GO_INSTALL, "sigs.k8s.io/kwok/cmd/kwokctl"),
        *_kind_node(src),
    )


def select(pins: Pins, groups: Iterable[Group]) -> tuple[Artifact, ...]:
    wanted = set(groups)
    return tuple(artifact for artifact in catalog(pins) if artifact.group in wanted)


def bin_dir_from_env() -> Path | None:
    value = os.environ.get(BIN_DIR_ENV)
    return Path(value).expanduser().resolve() if value else None


def cached_path(artifact: Artifact) -> Path:
    """Where a build of this artifact lives in winsuite's cache (keyed by the source's version)."""
    return cache_dir() / "bin" / artifact.source.cache_name / artifact.name


def locate(artifact: Artifact, bin_dir: Path | None) -> Path | None:
    """A usable copy: the given bin directory first (used as is), then the cache."""
    for candidate in ([bin_dir / artifact.name] if bin_dir else []) + [cached_path(artifact)]:
        found = probe(candidate, "prebuilt binary (--bin-dir)" if candidate.parent == bin_dir else "cached binary")
        if artifact.recipe is Recipe.MODULE_FILES:
            if found is Found.DIRECTORY:
                return candidate
        elif found is Found.FILE and os.access(candidate, os.X_OK):
            return candidate
    return None
