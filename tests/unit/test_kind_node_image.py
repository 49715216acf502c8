"""The kind node image's recipe: kubeadm's images mapped to winsuite's builds, kind's files adjusted, the tar."""

from __future__ import annotations

import dataclasses
import io
import json
import tarfile
from pathlib import Path

import pytest

from winsuite.cluster.kind.config import NODE_POD_CIDR
from winsuite.cluster.kind.config import POD_SUBNET
from winsuite.cluster.kind.nodeimage import build
from winsuite.cluster.kind.nodeimage import components
from winsuite.cluster.kind.nodeimage import files
from winsuite.components.ociimage import Entry
from winsuite.errors import UsageError
from winsuite.inputs.pins import load_pins

# `kubeadm config images list --kubernetes-version v1.36.3`, as the built kubeadm prints it.
KUBEADM_WANTS = [
    "registry.k8s.io/kube-apiserver:v1.36.3", "registry.k8s.io/kube-controller-manager:v1.36.3",
    "registry.k8s.io/kube-scheduler:v1.36.3", "registry.k8s.io/kube-proxy:v1.36.3",
    "registry.k8s.io/coredns/coredns:v1.14.2", "registry.k8s.io/pause:3.10.2", "registry.k8s.io/etcd:3.6.8-0",
]


def test_every_image_kubeadm_wants_is_made_and_only_coredns_changes_its_tag() -> None:
    pins = load_pins()
    made = {c.reference: c.wanted_tag for c in components.components(KUBEADM_WANTS, pins)}
    assert set(made) == {*KUBEADM_WANTS[:4], f"registry.k8s.io/coredns/coredns:{pins.coredns}", *KUBEADM_WANTS[5:]}
    assert made[f"registry.k8s.io/coredns/coredns:{pins.coredns}"] == "v1.14.2"


def test_an_etcd_kubeadm_wants_other_than_the_pin_is_refused() -> None:
    pins = dataclasses.replace(load_pins(), etcd="v3.5.0")
    wanted = r"kubeadm v1\.36\.3 wants etcd 3\.6\.8-0; suite/winsuite/pins\.yaml pins v3\.5\.0"
    with pytest.raises(UsageError, match=wanted):
        components.components(KUBEADM_WANTS, pins)


def test_an_image_winsuite_cannot_make_is_named(tmp_path: Path) -> None:
    (unknown,) = components.components(["registry.k8s.io/kindnetd:v1"], load_pins())
    with pytest.raises(UsageError, match="kindnetd:v1, which winsuite cannot make"):
        components.spec(unknown, {}, tmp_path)


def base_files(tmp_path: Path) -> Path:
    """kind's images/base/files, reduced to the files winsuite changes (their text as in kind v0.33.0)."""
    (tmp_path / "etc/containerd").mkdir(parents=True)
    (tmp_path / "etc/systemd/system").mkdir(parents=True)
    (tmp_path / "usr/local/bin").mkdir(parents=True)
    (tmp_path / "etc/containerd/config.toml").write_text(
        '[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "registry.k8s.io/pause:3.10"\n'
        "  restrict_oom_score_adj = false\n")
    (tmp_path / "etc/systemd/system/containerd.service").write_text(
        "[Service]\nExecStart=/usr/local/bin/containerd\nOOMScoreAdjust=-999\n")
    (tmp_path / "usr/local/bin/entrypoint").write_text("#!/bin/bash\n")
    return tmp_path


def test_kinds_files_get_the_sandbox_image_no_negative_oom_and_kinds_modes(tmp_path: Path) -> None:
    entries = {e.path: e for e in files._kind_base_files(base_files(tmp_path), "registry.k8s.io/pause:3.10.2")}
    config = (entries["/etc/containerd/config.toml"].data or b"").decode()
    assert 'sandbox_image = "registry.k8s.io/pause:3.10.2"' in config
    assert "restrict_oom_score_adj = true" in config
    assert b"OOMScoreAdjust" not in (entries["/etc/systemd/system/containerd.service"].data or b"")
    assert (entries["/usr/local/bin/entrypoint"].mode, entries["/etc/containerd/config.toml"].mode) == (0o755, 0o644)


def test_a_kind_file_that_changed_shape_stops_the_build(tmp_path: Path) -> None:
    base = base_files(tmp_path)
    (base / "etc/containerd/config.toml").write_text("version = 3\n")
    with pytest.raises(UsageError, match=r"config\.toml no longer has 'sandbox_image"):
        files._kind_base_files(base, "registry.k8s.io/pause:3.10.2")


def test_units_are_enabled_as_systemctl_would_and_negative_oom_units_are_reset() -> None:
    entries = {e.path: e for e in files._systemd({"winsuite-images.service": "[Unit]\n"})}
    wants = "/etc/systemd/system/multi-user.target.wants/"
    assert {p.removeprefix(wants) for p in entries if p.startswith(wants)} == set(files.ENABLED_UNITS)
    assert entries["/etc/systemd/system/systemd-binfmt.service"].link == "/dev/null"
    for unit in ("systemd-journald.service", "dbus.service"):
        assert b"OOMScoreAdjust=\n" in (entries[f"/etc/systemd/system/{unit}.d/10-winsuite-oom.conf"].data or b"")


def test_the_pod_network_is_the_first_slice_of_the_clusters_pod_subnet() -> None:
    conflist = json.loads(files.cni_conflist())
    (subnet,) = conflist["plugins"][0]["ipam"]["ranges"][0]
    assert subnet["subnet"] == NODE_POD_CIDR and NODE_POD_CIDR.split(".")[:2] == POD_SUBNET.split(".")[:2]
    assert conflist["plugins"][0]["ipMasq"] is False


def test_kwok_runs_in_the_node_against_its_admin_kubeconfig() -> None:
    unit = files._kwok_unit()
    assert "--kubeconfig=/etc/kubernetes/admin.conf" in unit
    assert "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake" in unit
    assert f"--config={files.KWOK_STAGES}/pod/fast" in unit


def test_the_tar_drops_what_kind_removes_and_adds_winsuites_files(tmp_path: Path) -> None:
    root = tmp_path / "root"
    wants = root / "usr/lib/systemd/system/multi-user.target.wants"
    wants.mkdir(parents=True)
    (wants / "getty.target").write_text("")
    (root / "dev").mkdir()
    (root / "dev/null").write_text("")
    (root / "etc").mkdir()
    (root / "etc/os-release").write_text("bookworm")
    out = io.BytesIO()
    overlay = [Entry("/kind/version", 0o644, data=b"v1.36.3"), Entry("/etc/os-release", 0o644, data=b"winsuite")]
    build.write_tar(root, overlay, out)
    out.seek(0)
    with tarfile.open(fileobj=out) as tar:
        names = tar.getnames()
        version, release = tar.extractfile("kind/version"), tar.extractfile("etc/os-release")
        assert version is not None and version.read() == b"v1.36.3"
        assert release is not None and release.read() == b"winsuite"
    assert len(names) == len(set(names))  # podman and docker refuse a layer that names a path twice
    assert "etc/os-release" in names and "dev" in names and "usr/lib/systemd/system/multi-user.target.wants" in names
    assert "dev/null" not in names and "usr/lib/systemd/system/multi-user.target.wants/getty.target" not in names
