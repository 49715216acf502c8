"""What winsuite adds to the Debian root file system to make a kind node: kind's base files (adjusted to machines
that refuse a negative oom_score_adj), the pinned binaries, the images kubeadm starts, a CNI configuration, kwok."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path

from winsuite.cluster.kind.config import NODE_POD_CIDR
from winsuite.cluster.kind.nodeimage.components import Component
from winsuite.components import simnodes
from winsuite.components.artifacts import CNI_PLUGINS
from winsuite.components.ociimage import Entry
from winsuite.errors import UsageError

KUBERNETES_BINARIES = ("kubeadm", "kubelet", "kubectl")  # /usr/bin: kind's kubelet unit runs /usr/bin/kubelet
RUNTIME_BINARIES = ("containerd", "ctr", "containerd-shim-runc-v2", "crictl", "kwok")
IMAGES_DIR = "/kind/images"
KWOK_STAGES = "/etc/kwok/stages"
KWOK_PORT = 10247  # inside the node's own network namespace
IMPORT_UNIT = "winsuite-images.service"
IMPORT = "ctr --namespace=k8s.io images import --all-platforms"
KWOK_UNIT = "kwok.service"
ENABLED_UNITS = ("kubelet.service", "containerd.service", "undo-mount-hacks.service", IMPORT_UNIT)
# Units of the root file system that ask for a negative oom_score_adj, which fails with EIO where the bounding set
# lacks CAP_SYS_RESOURCE; systemd treats that as fatal (kind's containerd unit asks for it too: changed below).
NEGATIVE_OOM_UNITS = ("systemd-journald.service", "dbus.service")


def _base_file(base: Path, relative: str) -> str:
    return (base / relative).read_text()


def _replaced(text: str, old: str, new: str, where: str) -> str:
    """`text` with `old` replaced; kind's files changing shape is an error to fix here, not something to paper over."""
    if old not in text:
        raise UsageError(f"kind's {where} no longer has {old.strip()!r}: the node image recipe needs updating")
    return text.replace(old, new)


def _kind_base_files(base: Path, pause: str) -> list[Entry]:
    """kind's images/base/files, with the modes kind's Dockerfile gives them and the changes this machine needs."""
    changed = {
        "etc/containerd/config.toml": _replaced(
            _replaced(_base_file(base, "etc/containerd/config.toml"), 'sandbox_image = "registry.k8s.io/pause:3.10"',
                      f'sandbox_image = "{pause}"', "containerd config.toml"),
            "restrict_oom_score_adj = false", "restrict_oom_score_adj = true", "containerd config.toml"),
        "etc/systemd/system/containerd.service": _replaced(
            _base_file(base, "etc/systemd/system/containerd.service"), "OOMScoreAdjust=-999\n", "",
            "containerd.service"),
    }
    entries = []
    for path in sorted(p for p in base.rglob("*") if p.is_file()):
        relative = str(path.relative_to(base))
        executable = relative.startswith(("usr/local/bin/", "kind/bin/"))
        mode = 0o755 if executable else 0o644
        if relative in changed:
            entries.append(Entry(f"/{relative}", mode, data=changed[relative].encode()))
        else:
            entries.append(Entry(f"/{relative}", mode, source=path))
    return entries


def _systemd(units: Mapping[str, str]) -> list[Entry]:
    """winsuite's units, the enabled ones linked as `systemctl enable` would, the OOM and journald drop-ins."""
    entries = [Entry(f"/etc/systemd/system/{name}", 0o644, data=text.encode()) for name, text in units.items()]
    entries += [Entry(f"/etc/systemd/system/multi-user.target.wants/{unit}", 0o777, link=f"/etc/systemd/system/{unit}")
                for unit in ENABLED_UNITS]
    entries.append(Entry("/etc/systemd/system/systemd-binfmt.service", 0o777, link="/dev/null"))  # kind masks it
    entries += [Entry(f"/etc/systemd/system/{unit}.d/10-winsuite-oom.conf", 0o644,
                      data=b"[Service]\n# empty: no oom_score_adj (a negative one is refused here)\nOOMScoreAdjust=\n")
                for unit in NEGATIVE_OOM_UNITS]
    entries.append(Entry("/etc/systemd/journald.conf.d/10-kind.conf", 0o644, data=b"[Journal]\nReadKMsg=no\n"))
    entries.append(Entry("/etc/systemd/system/kubelet.service.d/12-winsuite-images.conf", 0o644,
                         data=f"[Unit]\nWants={IMPORT_UNIT}\nAfter={IMPORT_UNIT}\n".encode()))
    return entries


def _import_unit() -> str:
    return f"""[Unit]
Description=Import the images kubeadm starts (the node has no registry to pull them from)
Requires=containerd.service
After=containerd.service
Before=kubelet.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -euc 'for image in {IMAGES_DIR}/*.tar; do {IMPORT} "$image"; done'

[Install]
WantedBy=multi-user.target
"""


def _kwok_unit() -> str:
    argv = simnodes.kwok_argv(Path("/usr/local/bin/kwok"), Path(KWOK_STAGES), Path("/etc/kubernetes/admin.conf"),
                              (Path("/etc/kubernetes/pki/apiserver.crt"), Path("/etc/kubernetes/pki/apiserver.key")),
                              KWOK_PORT)
    return f"""[Unit]
Description=kwok: the cluster's simulated nodes (started by winsuite once the control plane serves)
After=kubelet.service

[Service]
ExecStart={' '.join(argv)}
Restart=always
RestartSec=2
"""


def cri_base_spec(ctr: Path) -> bytes:
    """containerd's default OCI spec as kind's Dockerfile makes it: the product-files hook, no rlimits."""
    spec = json.loads(subprocess.run([str(ctr), "oci", "spec"], capture_output=True, check=True).stdout)
    spec.setdefault("hooks", {}).setdefault("createContainer", []).append({"path": "/kind/bin/mount-product-files.sh"})
    spec["process"].pop("rlimits", None)
    return json.dumps(spec, indent=2).encode()


def cni_conflist() -> bytes:
    """The node's pod network (what kindnetd would write for one node): ptp veths, host-local on the node's CIDR."""
    return json.dumps({
        "cniVersion": "0.4.0",
        "name": "winsuite",
        "plugins": [
            {"type": "ptp", "ipMasq": False, "mtu": 1500,
             "ipam": {"type": "host-local", "dataDir": "/run/cni-ipam-state", "routes": [{"dst": "0.0.0.0/0"}],
                      "ranges": [[{"subnet": NODE_POD_CIDR}]]}},
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ],
    }, indent=2).encode()


# kind's own fallback manifest: the default StorageClass (kind's controller manager runs the hostpath provisioner).
DEFAULT_STORAGE = b"""apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/host-path
"""


def entries(kubernetes: str, bins: Mapping[str, Path], images: Mapping[Component, Path]) -> list[Entry]:
    """Every file winsuite puts into the node image, over the root file system."""
    pause = next(component.reference for component in images if component.name == "pause")
    files = _kind_base_files(bins["kind-base-files"], pause)
    files += _systemd({IMPORT_UNIT: _import_unit(), KWOK_UNIT: _kwok_unit()})
    files += [Entry(f"/usr/bin/{name}", 0o755, source=bins[name]) for name in KUBERNETES_BINARIES]
    files += [Entry(f"/usr/local/bin/{name}", 0o755, source=bins[name]) for name in RUNTIME_BINARIES]
    files += [Entry(f"/opt/cni/bin/{name}", 0o755, source=bins[name]) for name in CNI_PLUGINS]
    stages = bins["kwok-stages"]
    files += [Entry(f"{KWOK_STAGES}/{path.relative_to(stages)}", 0o644, source=path)
              for path in sorted(stages.rglob("*")) if path.is_file()]
    files += [Entry(f"{IMAGES_DIR}/{component.name}.tar", 0o644, source=archive)
              for component, archive in images.items()]
    files += [
        Entry("/etc/containerd/cri-base.json", 0o644, data=cri_base_spec(bins["ctr"])),
        Entry("/etc/cni/net.d/10-winsuite.conflist", 0o644, data=cni_conflist()),
        Entry("/etc/kubernetes/manifests", 0o755),
        Entry("/kind/version", 0o644, data=kubernetes.encode()),
        Entry("/kind/manifests/default-storage.yaml", 0o644, data=DEFAULT_STORAGE),
    ]
    return files
