"""The pinned versions (suite/winsuite/pins.yaml), read on demand."""

from __future__ import annotations

import dataclasses
import functools

from winsuite.errors import DataError
from winsuite.inputs import strict_yaml
from winsuite.paths import PACKAGE_DIR

PINS_FILE = PACKAGE_DIR / "pins.yaml"


@dataclasses.dataclass(frozen=True)
class Pins:
    kubernetes: str
    etcd: str
    kwok: str
    coredns: str
    metrics_server: str
    go: str
    kind: str
    containerd: str
    crictl: str
    cni_plugins: str
    busybox: str
    busybox_sha256: str
    node_debian: str
    kind_node_image: str


@functools.cache
def load_pins() -> Pins:
    raw = strict_yaml.read(PINS_FILE, "pins file")
    try:
        return Pins(
            kubernetes=str(raw["kubernetes"]),
            etcd=str(raw["etcd"]),
            kwok=str(raw["kwok"]),
            coredns=str(raw["coredns"]),
            metrics_server=str(raw["metricsServer"]),
            go=str(raw["go"]),
            kind=str(raw["kind"]),
            containerd=str(raw["containerd"]),
            crictl=str(raw["crictl"]),
            cni_plugins=str(raw["cniPlugins"]),
            busybox=str(raw["busybox"]),
            busybox_sha256=str(raw["busyboxSha256"]),
            node_debian=str(raw["nodeDebian"]),
            kind_node_image=str(raw["kindNodeImage"]),
        )
    except KeyError as missing:
        raise DataError(PINS_FILE, str(missing), "missing pin") from missing
