"""A private containerd (config, root, state and socket under the cluster's directory) and its images."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path

from winsuite.cluster.embedded.config import LOOPBACK
from winsuite.cluster.embedded.realnode.prereqs import CNI_BIN_DIR
from winsuite.cluster.embedded.state import Layout
from winsuite.components.errors import ComponentFailed
from winsuite.components.health import wait_until
from winsuite.components.processes import Process
from winsuite.components.processes import spawn
from winsuite.errors import UsageError

NAMESPACE = "k8s.io"  # the namespace the CRI plugin (and so kubelet) uses
SOCKET_LIMIT = 107  # sun_path


@dataclasses.dataclass(frozen=True)
class Containerd:
    home: Path  # <cluster>/node/containerd

    @property
    def socket(self) -> Path:
        return self.home / "containerd.sock"

    @property
    def config(self) -> Path:
        return self.home / "config.toml"

    @property
    def cni_conf_dir(self) -> Path:
        return self.home.parent / "cni" / "net.d"

    def ctr(self, *args: str) -> subprocess.CompletedProcess[str]:
        argv = ["ctr", "--address", str(self.socket), "--namespace", NAMESPACE, *args]
        return subprocess.run(argv, capture_output=True, text=True, check=False)


def render_config(node: Containerd, sandbox_image: str) -> str:
    """containerd 1.6 config: private paths, cgroupfs runc, the locally imported sandbox image, CNI dirs."""
    cri = 'plugins."io.containerd.grpc.v1.cri"'
    quoted = json.dumps  # TOML basic strings are JSON strings
    return f"""version = 2
root = {quoted(str(node.home / "root"))}
state = {quoted(str(node.home / "state"))}
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper",
]

[grpc]
  address = {quoted(str(node.socket))}

[ttrpc]
  address = {quoted(str(node.socket) + ".ttrpc")}

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = {quoted(str(node.home / "opt"))}

[{cri}]
  sandbox_image = {quoted(sandbox_image)}
  # These machines drop CAP_SYS_RESOURCE: without this, runc fails to set the pause container's
  # oom_score_adj (-998) and every sandbox dies ("can't get final child's PID from pipe: EOF").
  restrict_oom_score_adj = true
  stream_server_address = "{LOOPBACK}"
  stream_server_port = "0"
  enable_selinux = false

  [{cri}.containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [{cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [{cri}.containerd.runtimes.runc.options]
        SystemdCgroup = false

  [{cri}.cni]
    bin_dir = {quoted(str(CNI_BIN_DIR))}
    conf_dir = {quoted(str(node.cni_conf_dir))}
    max_conf_num = 1
"""


def start(node: Containerd, sandbox_image: str, log: Path) -> Process:
    if len(str(node.socket)) > SOCKET_LIMIT:
        raise ComponentFailed(
            f"containerd socket path {node.socket} is longer than {SOCKET_LIMIT} bytes; "
            "use a shorter WINSUITE_CACHE_DIR"
        )
    node.home.mkdir(parents=True, exist_ok=True)
    node.config.write_text(render_config(node, sandbox_image))
    proc = spawn("containerd", ["containerd", "--config", str(node.config)], log)
    wait_until(proc, lambda: node.ctr("version").returncode == 0, what="serving its socket", timeout=30)
    return proc


def import_images(node: Containerd, archives: Sequence[Path]) -> None:
    for archive in archives:
        result = node.ctr("images", "import", str(archive))
        if result.returncode != 0:
            raise ComponentFailed(f"failed to import {archive} into containerd: {result.stderr.strip()}")


def image_names(node: Containerd) -> list[str]:
    return node.ctr("images", "list", "--quiet").stdout.split()


def remove_all_containers(node: Containerd) -> None:
    """Kill and delete every task and container of the private containerd (pods kubelet did not finish)."""
    for task in node.ctr("tasks", "list", "--quiet").stdout.split():
        node.ctr("tasks", "kill", "--signal", "SIGKILL", task)
        node.ctr("tasks", "delete", "--force", task)
    for container in node.ctr("containers", "list", "--quiet").stdout.split():
        node.ctr("containers", "delete", container)


class RealNodeImages:
    """The named embedded cluster's real node and its containerd's images (cluster.node_images)."""

    where = "the real node's containerd"

    def __init__(self, cluster: str) -> None:
        self.node = Containerd(Layout(cluster).node / "containerd")
        if not self.node.socket.exists():
            raise UsageError(f"the embedded cluster {cluster!r} has no real node running (no {self.node.socket}); "
                             "start it with `winsuite cluster up`")

    def names(self) -> set[str]:
        return set(image_names(self.node))

    def import_archive(self, archive: Path, report: Callable[[str], None]) -> None:
        import_images(self.node, [archive])
